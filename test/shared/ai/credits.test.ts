/** The DynamoDB parameters of credits: a reservation can never take the balance below zero. */
import { describe, expect, it } from 'vitest';
import { creditsKey, grantParams, refundParams, reserveParams, settleParams } from '../../../shared/ai/credits.js';

describe('credit parameters', () => {
  it('reserves with a condition that the balance covers the amount (a new user: the default)', () => {
    const params = reserveParams('usr_1', 100, 10000, '2026-01-01T00:00:00.000Z');

    expect(params.Key).toEqual(creditsKey('usr_1'));
    expect(params.UpdateExpression).toBe('SET balance = if_not_exists(balance, :default) - :amount, updatedAt = :now');
    expect(params.ConditionExpression).toBe('attribute_not_exists(balance) OR balance >= :amount');
    expect(params.ExpressionAttributeValues).toMatchObject({ ':default': 10000, ':amount': 100 });
  });

  it('refuses a new user a reservation larger than the default', () => {
    expect(reserveParams('usr_1', 500, 100, 'now').ConditionExpression).toBe('balance >= :amount');
  });

  it('settles by giving back the unused part of the reservation and recording the usage', () => {
    const usage = { tokensUsed: 30, model: 'fast', at: '2026-01-01T00:00:00.000Z' };
    const params = settleParams('usr_1', 100, usage);

    expect(params.UpdateExpression).toBe('ADD balance :back SET lastUsage = :usage, updatedAt = :now');
    expect(params.ExpressionAttributeValues).toMatchObject({ ':back': 70, ':usage': usage });
    expect(params.ConditionExpression).toBeUndefined();
  });

  it('refunds and grants by adding to the balance', () => {
    expect(refundParams('usr_1', 100, 'now').ExpressionAttributeValues).toMatchObject({ ':amount': 100 });
    expect(grantParams('usr_1', 5, 10000, 'now').UpdateExpression).toBe('SET balance = if_not_exists(balance, :default) + :amount, updatedAt = :now');
  });
});

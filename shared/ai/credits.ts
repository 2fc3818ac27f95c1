/**
 * Per-user credits for text generation, in the identity table:
 *   balance  pk `USER#<userId>`, sk `AI#CREDITS` — {balance, lastUsage?, updatedAt}; absent until
 *            the user's first call or grant, which start from AI_DEFAULT_CREDITS
 *   grants   pk `AIGRANTS#<userId>`, sk `<ISO time>#<grantId>` — the audit of admin grants
 *
 * A call reserves maxTokens with ONE conditional UpdateItem that fails instead of going below
 * zero (so parallel calls cannot overspend), then settles: the unused part of the reservation is
 * given back and the usage recorded. A failed provider call gives the whole reservation back.
 * Parameters are built by pure functions; `send` is the only I/O.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../data/index.js';
import { InsufficientCreditsError } from '../errors.js';
import { newId } from '../ids.js';

export interface Usage {
  tokensUsed: number;
  model: string;
  at: string;
}

export interface Credits {
  balance: number;
  lastUsage: Usage | null;
}

export interface Grant {
  id: string;
  userId: string;
  tenantId: string;
  amount: number;
  reason: string | null;
  grantedBy: string;
  balanceAfter: number;
  at: string;
}

export function creditsKey(userId: string): { pk: string; sk: string } {
  return { pk: `USER#${userId}`, sk: 'AI#CREDITS' };
}

export function grantsPartition(userId: string): string {
  return `AIGRANTS#${userId}`;
}

/** Takes `amount` from the balance, or fails the condition when the balance would go below zero. */
export function reserveParams(userId: string, amount: number, defaultCredits: number, now: string): UpdateCommandInput {
  return {
    TableName: tableName('identity'),
    Key: creditsKey(userId),
    UpdateExpression: 'SET balance = if_not_exists(balance, :default) - :amount, updatedAt = :now',
    // A user without an item has the default balance: allowed only when the default covers it.
    ConditionExpression: defaultCredits >= amount ? 'attribute_not_exists(balance) OR balance >= :amount' : 'balance >= :amount',
    ExpressionAttributeValues: { ':default': defaultCredits, ':amount': amount, ':now': now },
    ReturnValues: 'UPDATED_NEW',
  };
}

/** Gives back what the call did not use and records the usage. */
export function settleParams(userId: string, reserved: number, usage: Usage): UpdateCommandInput {
  return {
    TableName: tableName('identity'),
    Key: creditsKey(userId),
    UpdateExpression: 'ADD balance :back SET lastUsage = :usage, updatedAt = :now',
    ExpressionAttributeValues: { ':back': reserved - usage.tokensUsed, ':usage': usage, ':now': usage.at },
    ReturnValues: 'UPDATED_NEW',
  };
}

export function refundParams(userId: string, amount: number, now: string): UpdateCommandInput {
  return {
    TableName: tableName('identity'),
    Key: creditsKey(userId),
    UpdateExpression: 'ADD balance :amount SET updatedAt = :now',
    ExpressionAttributeValues: { ':amount': amount, ':now': now },
  };
}

/** Adds credits; a user without an item starts from the default. */
export function grantParams(userId: string, amount: number, defaultCredits: number, now: string): UpdateCommandInput {
  return {
    TableName: tableName('identity'),
    Key: creditsKey(userId),
    UpdateExpression: 'SET balance = if_not_exists(balance, :default) + :amount, updatedAt = :now',
    ExpressionAttributeValues: { ':default': defaultCredits, ':amount': amount, ':now': now },
    ReturnValues: 'UPDATED_NEW',
  };
}

export async function getCredits(userId: string, defaultCredits: number): Promise<Credits> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName('identity'), Key: creditsKey(userId), ConsistentRead: true }));
  return { balance: Item ? Number(Item.balance) : defaultCredits, lastUsage: (Item?.lastUsage as Usage | undefined) ?? null };
}

/** Reserves `amount`; 402 INSUFFICIENT_CREDITS (with the balance) when it is not there. */
export async function reserveCredits(userId: string, amount: number, defaultCredits: number): Promise<number> {
  try {
    const { Attributes } = await db().send(new UpdateCommand(reserveParams(userId, amount, defaultCredits, new Date().toISOString())));
    return Number(Attributes?.balance);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException || (error as Error).name === 'ConditionalCheckFailedException') {
      const { balance } = await getCredits(userId, defaultCredits);
      throw new InsufficientCreditsError(amount, balance);
    }
    throw error;
  }
}

export async function settleCredits(userId: string, reserved: number, usage: Usage): Promise<number> {
  const { Attributes } = await db().send(new UpdateCommand(settleParams(userId, reserved, usage)));
  return Number(Attributes?.balance);
}

export async function refundCredits(userId: string, amount: number): Promise<void> {
  await db().send(new UpdateCommand(refundParams(userId, amount, new Date().toISOString())));
}

/** Adds credits and writes the audit entry of the grant. */
export async function grantCredits(input: { userId: string; tenantId: string; amount: number; reason?: string; grantedBy: string; defaultCredits: number }): Promise<Grant> {
  const at = new Date().toISOString();
  const { Attributes } = await db().send(new UpdateCommand(grantParams(input.userId, input.amount, input.defaultCredits, at)));
  const grant: Grant = {
    id: newId('grt'),
    userId: input.userId,
    tenantId: input.tenantId,
    amount: input.amount,
    reason: input.reason ?? null,
    grantedBy: input.grantedBy,
    balanceAfter: Number(Attributes?.balance),
    at,
  };
  await db().send(new PutCommand({ TableName: tableName('identity'), Item: { pk: grantsPartition(input.userId), sk: `${at}#${grant.id}`, ...grant } }));
  return grant;
}

/** The user's latest grants, newest first. */
export async function listGrants(userId: string, limit = 20): Promise<Grant[]> {
  const { Items } = await db().send(
    new QueryCommand({
      TableName: tableName('identity'),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': grantsPartition(userId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (Items ?? []).map(({ id, userId: owner, tenantId, amount, reason, grantedBy, balanceAfter, at }) => ({
    id, userId: owner, tenantId, amount, reason, grantedBy, balanceAfter, at,
  }) as Grant);
}

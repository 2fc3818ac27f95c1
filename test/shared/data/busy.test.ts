/** Engine-busy errors and their retry in place (shared/data/busy.ts); events restamped per attempt (change-events.ts). */
import { describe, expect, it } from 'vitest';
import { busyDelay, isEngineBusy, whileBusy } from '../../../shared/data/busy.js';
import { restampEvents } from '../../../shared/data/change-events.js';
import type { TransactItem } from '../../../shared/data/record-item.js';

const lockTimeout = Object.assign(new Error('This action timed out because it too long waiting for a lock. This request will succeed in actual DynamoDB API'), {
  name: 'InternalServerError',
  $metadata: { httpStatusCode: 500 },
});

describe('isEngineBusy', () => {
  it("knows DynamoDB's throttling and DynamoDB Local's lock timeout", () => {
    for (const name of ['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']) expect(isEngineBusy({ name })).toBe(true);
    expect(isEngineBusy(lockTimeout)).toBe(true);
    expect(isEngineBusy({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }] })).toBe(true);
  });

  it('leaves failed conditions, conflicts and bad requests to the caller', () => {
    expect(isEngineBusy({ name: 'ConditionalCheckFailedException' })).toBe(false);
    expect(isEngineBusy({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'ThrottlingError' }] })).toBe(false);
    expect(isEngineBusy({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'TransactionConflict' }] })).toBe(false);
    expect(isEngineBusy({ name: 'ValidationException' })).toBe(false);
    expect(isEngineBusy(undefined)).toBe(false);
  });
});

describe('whileBusy', () => {
  it('runs the work again while the engine is busy, and returns its result', async () => {
    let calls = 0;

    const result = await whileBusy(async () => {
      calls += 1;
      if (calls < 3) throw lockTimeout;
      return 'done';
    });

    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('throws any other error at once, and the busy one after the last attempt', async () => {
    let calls = 0;
    await expect(whileBusy(async () => { calls += 1; throw new Error('bad'); })).rejects.toThrow('bad');
    expect(calls).toBe(1);

    calls = 0;
    await expect(whileBusy(async () => { calls += 1; throw lockTimeout; }, { attempts: 3 })).rejects.toBe(lockTimeout);
    expect(calls).toBe(3);
  });

  it('waits with full jitter, capped at 2 s', () => {
    expect(busyDelay(1, () => 0.999)).toBeLessThan(100);
    expect(busyDelay(10, () => 0.999)).toBeLessThan(2000);
    expect(busyDelay(3, () => 0)).toBe(0);
  });
});

describe('restampEvents', () => {
  it("moves the events' position, createdAt and expiry to the given time, keeping the suffix and every other item", () => {
    const items: TransactItem[] = [
      { Put: { TableName: 'records', Item: { pk: 'r', sk: '#record', createdAt: '2026-01-01T00:00:00.000Z' } } },
      { Put: { TableName: 'events', Item: { pk: 't#tasks', sk: '2026-01-01T00:00:00.000Z#abc123', createdAt: '2026-01-01T00:00:00.000Z', expiresAt: 1 } } },
    ];

    const stamped = restampEvents(items, 'events', '2026-01-01T00:00:05.000Z');

    expect(stamped[0]).toBe(items[0]);
    expect(stamped[1].Put!.Item).toMatchObject({ sk: '2026-01-01T00:00:05.000Z#abc123', createdAt: '2026-01-01T00:00:05.000Z', expiresAt: Date.parse('2026-01-01T00:00:05.000Z') / 1000 + 86_400 });
    expect(items[1].Put!.Item!.sk).toBe('2026-01-01T00:00:00.000Z#abc123');
  });
});

import { describe, expect, it } from 'vitest';
import { operationOf, unitsOf } from '../../../shared/data/client.js';
import { currentUsage, foregroundActivity, withRequestUsage } from '../../../shared/data/usage.js';
import { requestCost, serverTiming, units } from '../../../shared/http/request-metrics.js';

describe('consumed capacity of a call', () => {
  it('names document-client and low-level commands by their operation', () => {
    expect(operationOf('GetCommand')).toBe('GetItem');
    expect(operationOf('TransactWriteCommand')).toBe('TransactWriteItems');
    expect(operationOf('QueryCommand')).toBe('Query');
    expect(operationOf('UpdateItemCommand')).toBe('UpdateItem');
  });

  it('counts CapacityUnits as read or write units by the operation, and sums per-table entries', () => {
    expect(unitsOf({ CapacityUnits: 1 }, 'read')).toEqual({ rcu: 1, wcu: 0 });
    expect(unitsOf([{ CapacityUnits: 4 }, { CapacityUnits: 2 }], 'write')).toEqual({ rcu: 0, wcu: 6 });
    expect(unitsOf({ CapacityUnits: 3, ReadCapacityUnits: 1, WriteCapacityUnits: 2 }, 'write')).toEqual({ rcu: 1, wcu: 2 });
    expect(unitsOf(undefined, 'read')).toEqual({ rcu: 0, wcu: 0 });
  });
});

describe('request usage', () => {
  it('adds a nested request (a batch sub-request) to its own usage and to the enclosing one', async () => {
    await withRequestUsage(async (outer) => {
      outer.callStarted();
      outer.callEnded({ rcu: 1, wcu: 0 });
      await withRequestUsage(async (inner) => {
        expect(currentUsage()).toBe(inner);
        inner.callStarted();
        await new Promise((r) => setTimeout(r, 5));
        inner.callEnded({ rcu: 0.5, wcu: 2 });
        expect(inner).toMatchObject({ calls: 1, rcu: 0.5, wcu: 2 });
      });
      expect(currentUsage()).toBe(outer);
      expect(outer).toMatchObject({ calls: 2, rcu: 1.5, wcu: 2 });
      expect(outer.dbMs).toBeGreaterThan(0);
    });
    expect(currentUsage()).toBeUndefined();
  });

  it('counts overlapping calls once in the DynamoDB time', () => {
    withRequestUsage((usage) => {
      usage.callStarted(100);
      usage.callStarted(101);
      usage.callEnded({ rcu: 1, wcu: 0 }, 104);
      usage.callEnded({ rcu: 1, wcu: 0 }, 110);
      expect(usage.dbMs).toBe(10);
    });
  });

  it('formats the headers', () => {
    withRequestUsage((usage) => {
      usage.callStarted(usage.startedAt);
      usage.callEnded({ rcu: 1, wcu: 0.5 }, usage.startedAt + 4.25);
      expect(serverTiming(usage, usage.startedAt + 6)).toBe('auth;dur=0.0, db;dur=4.3;desc="1 call", app;dur=1.8, total;dur=6.0');
      expect(requestCost(usage)).toBe('rcu=1.0, wcu=0.5');
    });
    expect(units(29)).toBe('29.0');
    expect(units(0.25)).toBe('0.25');
  });

  it('counts the requests in flight (a sub-request not again) and when the last one ended: what the migration yields to', async () => {
    let release!: () => void;
    const before = foregroundActivity().inFlight;

    const request = withRequestUsage(async () => {
      await withRequestUsage(async () => {
        expect(foregroundActivity().inFlight).toBe(before + 1);
        await new Promise<void>((resolve) => (release = resolve));
      });
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(foregroundActivity().inFlight).toBe(before + 1);
    release();
    await request;

    expect(foregroundActivity().inFlight).toBe(before);
    expect(performance.now() - foregroundActivity().lastEndedAt).toBeLessThan(1000);
    await expect(withRequestUsage(async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(foregroundActivity().inFlight).toBe(before);
  });
});

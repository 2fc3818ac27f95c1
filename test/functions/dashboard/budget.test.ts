/**
 * The session's budget as the dashboard spends it (dashboard/src/budget.ts): the countdown, the
 * reserve kept for the user's pages, and how an export or import fits the rate-limit window.
 */
import { describe, expect, it } from 'vitest';
import { clock, count, countdown, duration, mustPause, plan, reserveOf, windowMs } from '../../../dashboard/src/budget.js';

const NOW = 1_000_000;

describe('the countdown and durations', () => {
  it('reads mm:ss, then h:mm:ss from an hour', () => {
    expect([countdown(0), countdown(9_200), countdown(65_000), countdown(3_725_000)]).toEqual(['0:00', '0:10', '1:05', '1:02:05']);
  });

  it('groups thousands and reads the time of day, without Intl', () => {
    const at = new Date(2026, 0, 2, 9, 5, 7).getTime();

    expect([count(0), count(999), count(4987), count(100000)]).toEqual(['0', '999', '4,987', '100,000']);
    expect([clock(at), clock(at, true)]).toEqual(['09:05', '09:05:07']);
  });

  it('says durations as people do', () => {
    expect([duration(400), duration(42_000), duration(5 * 60_000), duration(62 * 60_000)]).toEqual(['1 s', '42 s', '5 min', '1 h 2 min']);
  });

  it('reads the window of OPTIONS rateLimit', () => {
    expect([windowMs('1h'), windowMs('10s'), windowMs('1d'), windowMs(undefined)]).toEqual([3_600_000, 10_000, 86_400_000, 3_600_000]);
  });
});

describe('a transfer within the window', () => {
  it('keeps a tenth of the window for the other pages, at most 20', () => {
    expect([reserveOf(3), reserveOf(100), reserveOf(5000)]).toEqual([0, 10, 20]);
  });

  it('runs at once when the window has the requests, less the reserve', () => {
    expect(plan(11, { limit: 5000, remaining: 4900, resetAt: NOW + 60_000 }, 200, 3_600_000, NOW)).toEqual({ requests: 11, resetAt: NOW + 60_000, now: 11, waits: 0, ms: 2_200 });
  });

  it('waits for each reset it needs: 100 requests for a user with 40 left', () => {
    const p = plan(100, { limit: 100, remaining: 40, resetAt: NOW + 600_000 }, 100, 3_600_000, NOW);

    // 30 now (10 kept back), 70 more fit the next window of 90.
    expect(p).toEqual({ requests: 100, resetAt: NOW + 600_000, now: 30, waits: 1, ms: 600_000 + 10_000 });
    expect(plan(200, { limit: 100, remaining: 40, resetAt: NOW + 600_000 }, 100, 3_600_000, NOW).waits).toBe(2);
  });

  it('counts a window that has reset since the last answer as whole, until its next reset', () => {
    const p = plan(6, { limit: 3, remaining: 0, resetAt: NOW - 2_000 }, 100, 10_000, NOW);

    expect(p).toEqual({ requests: 6, resetAt: NOW + 8_000, now: 3, waits: 1, ms: 8_000 + 600 });
  });

  it('estimates from the requests alone before any answer told the budget', () => {
    expect(plan(3, undefined, 250, 3_600_000, NOW)).toEqual({ requests: 3, now: 3, waits: 0, ms: 750 });
  });

  it('pauses at the reserve until the reset, not after it', () => {
    expect(mustPause({ limit: 100, remaining: 10, resetAt: NOW + 1 }, NOW)).toBe(true);
    expect(mustPause({ limit: 100, remaining: 11, resetAt: NOW + 1 }, NOW)).toBe(false);
    expect(mustPause({ limit: 100, remaining: 0, resetAt: NOW - 1 }, NOW)).toBe(false);
    expect(mustPause(undefined, NOW)).toBe(false);
  });
});

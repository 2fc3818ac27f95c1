/**
 * The stack answers for itself before the function's deadline: a handler still running when the
 * remaining time falls to DEADLINE_MARGIN_MS gets the client a 504 in the envelope, with
 * Retry-After, instead of a killed invocation or API Gateway's bare 504.
 */
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import {
  API_FUNCTION_TIMEOUT_SECONDS,
  DEADLINE_MARGIN_MS,
  INTEGRATION_TIMEOUT_SECONDS,
  MAX_INIT_SECONDS,
} from '../../../shared/http/deadline.js';
import { createApiHandler } from '../../../shared/http/stack.js';
import { parsed, proxyEvent } from '../../support/events.js';

/** The operation its declaration names for GET /api/health. */
const HEALTH = 'getHealth';

function contextWithDeadline(remainingMs: number): Context {
  const deadline = Date.now() + remainingMs;
  return { getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) } as unknown as Context;
}

describe('request deadline', () => {
  it('answers 504 GATEWAY_TIMEOUT with Retry-After in the envelope before the function would be stopped', async () => {
    let finished = false;
    let slow = false;
    const handler = createApiHandler({
      [HEALTH]: async () => {
        if (!slow) return { data: 'warm' };
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        finished = true;
        return { data: 'too late' };
      },
    });
    // The stack's first call loads its middleware; timed below is the deadline alone.
    await handler(proxyEvent({ method: 'GET', path: '/api/health' }), contextWithDeadline(DEADLINE_MARGIN_MS + 10_000));
    slow = true;
    const remainingMs = DEADLINE_MARGIN_MS + 300;
    const started = Date.now();

    const res = parsed(await handler(proxyEvent({ method: 'GET', path: '/api/health', headers: { 'X-Request-ID': 'slow-1' } }), contextWithDeadline(remainingMs)));

    const elapsed = Date.now() - started;
    expect(res.status).toBe(504);
    expect(res.body).toEqual({ success: false, code: 'GATEWAY_TIMEOUT', error: expect.stringMatching(/did not finish in time/), retryAfter: 1 });
    expect(res.headers['Retry-After']).toBe('1');
    expect(res.headers['X-Request-ID']).toBe('slow-1');
    // Answered with the margin still left, not at the deadline.
    expect(elapsed).toBeLessThan(remainingMs - DEADLINE_MARGIN_MS / 2);
    expect(finished).toBe(false);
  });

  it('lets a request that finishes in time answer as usual', async () => {
    const handler = createApiHandler({ [HEALTH]: async () => ({ data: { ok: true } }) });

    const res = parsed(await handler(proxyEvent({ method: 'GET', path: '/api/health' }), contextWithDeadline(DEADLINE_MARGIN_MS + 2_000)));

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { ok: true } });
  });

  it('keeps the order: the envelope before the function timeout, the function timeout plus the longest init within the integration timeout', () => {
    expect(DEADLINE_MARGIN_MS).toBeGreaterThan(0);
    expect(DEADLINE_MARGIN_MS).toBeLessThan(API_FUNCTION_TIMEOUT_SECONDS * 1000);
    expect(API_FUNCTION_TIMEOUT_SECONDS + MAX_INIT_SECONDS).toBeLessThanOrEqual(INTEGRATION_TIMEOUT_SECONDS);
  });
});

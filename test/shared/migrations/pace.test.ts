import { describe, expect, it } from 'vitest';
import { Pace } from '../../../shared/migrations/pace.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `units` units through the pace, all at once, each taking `ms(running)`; returns the most in flight together. */
async function peak(pace: Pace, units: number, ms: (running: number) => number = () => 2): Promise<number> {
  let running = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: units }, () =>
      pace.run(async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(ms(running));
        running -= 1;
      }),
    ),
  );
  return most;
}

const quiet = () => ({ inFlight: 0, lastEndedAt: 0 });

describe('Pace', () => {
  it('widens its window one unit per window of units while the API is quiet, up to its most', async () => {
    const pace = new Pace({ max: 4, activity: quiet });

    const most = await peak(pace, 60);

    expect(most).toBe(4);
    expect(pace.windows.quiet).toBe(4);
  });

  it('while the API is active, widens its window as long as units stay quick', async () => {
    const pace = new Pace({ max: 6, activity: () => ({ inFlight: 1, lastEndedAt: 0 }) });

    const most = await peak(pace, 80, () => 5);

    expect(most).toBe(6);
  });

  it('while the API is active, halves its window when units queue (take longer than the tolerance)', async () => {
    const pace = new Pace({ max: 16, tolerance: 1.5, activity: () => ({ inFlight: 1, lastEndedAt: 0 }) });

    // An engine that works on 2 at a time: a unit takes 5 ms per 2 in flight.
    await peak(pace, 200, (running) => 5 * Math.ceil(running / 2));

    expect(pace.windows.active).toBeLessThanOrEqual(4);
    expect(pace.windows.quiet).toBe(1);
  });

  it('counts the API active for quietMs after its last request ended, and uses the active window then', () => {
    const api = { inFlight: 0, lastEndedAt: performance.now() };
    const pace = new Pace({ max: 8, quietMs: 10_000, activity: () => api });

    expect(pace.apiActive()).toBe(true);
    expect(pace.allowed()).toBe(1);
    api.lastEndedAt = performance.now() - 20_000;
    expect(pace.apiActive()).toBe(false);
  });

  it('passes on what the unit returns and throws what it throws, freeing its place', async () => {
    const pace = new Pace({ max: 1, activity: quiet });

    await expect(pace.run(async () => 7)).resolves.toBe(7);
    await expect(pace.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(pace.run(async () => 'next')).resolves.toBe('next');
  });
});

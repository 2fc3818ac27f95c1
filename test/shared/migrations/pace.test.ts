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

/** Units of `unitMs` offered by 32 workers for `forMs` while `api` makes calls; returns the most in flight together. */
async function runBeside(pace: Pace, api: FakeApi, forMs: number, unitMs = 2): Promise<number> {
  let running = 0;
  let most = 0;
  const stopApi = api.start(() => running);
  const until = performance.now() + forMs;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < until) {
        await pace.run(async () => {
          running += 1;
          most = Math.max(most, running);
          await sleep(unitMs);
          running -= 1;
        });
      }
    }),
  );
  stopApi();
  return most;
}

const quiet = () => ({ inFlight: 0, lastEndedAt: 0 });
const active = () => ({ inFlight: 1, lastEndedAt: 0 });
const noCalls = () => () => undefined;

interface FakeApi {
  calls: (listener: (operation: string, ms: number) => void) => () => void;
  start(running: () => number): () => void;
}

/** An API making one call after another, each taking `ms(units in flight when it started)`. */
function fakeApi(ms: (running: number) => number): FakeApi {
  let listener: ((operation: string, ms: number) => void) | undefined;
  return {
    calls: (l) => {
      listener = l;
      return () => (listener = undefined);
    },
    start(running) {
      let on = true;
      void (async () => {
        while (on) {
          const took = ms(running());
          await sleep(took);
          listener?.('Query', took);
        }
      })();
      return () => (on = false);
    },
  };
}

describe('Pace', () => {
  it('widens its window one unit per window of units while the API is quiet, up to its most', async () => {
    const pace = new Pace({ max: 4, activity: quiet, calls: noCalls });

    const most = await peak(pace, 60);

    expect(most).toBe(4);
    expect(pace.windows.quiet).toBe(4);
  });

  it("while the API is active, widens its window as long as the API's calls beside the units are as quick as without them", async () => {
    const api = fakeApi(() => 3);
    const pace = new Pace({ max: 6, probeEveryMs: 30, probeMs: 20, activity: active, calls: api.calls });

    const most = await runBeside(pace, api, 1_000);

    expect(pace.windows.ratio).toBeLessThanOrEqual(1.5);
    expect(most).toBeGreaterThanOrEqual(3);
    pace.close();
  });

  it("while the API is active, narrows to one unit and then waits between units while the API's calls are slower beside them", async () => {
    // The API's calls take 8 ms without the migration and 8 ms more per unit in flight.
    const api = fakeApi((running) => 8 + 8 * running);
    const pace = new Pace({ max: 16, probeEveryMs: 150, probeMs: 60, gapMaxMs: 40, activity: active, calls: api.calls });
    const seen: { active: number; gapMs: number; ratio?: number }[] = [];
    const watch = setInterval(() => seen.push(pace.windows), 5);

    const most = await runBeside(pace, api, 3_000, 4);
    clearInterval(watch);

    // It never widens far (each widening is judged too slow at the next probe), and it waits
    // between units at times: the pace oscillates around what the tolerance allows.
    expect(most).toBeLessThanOrEqual(4);
    expect(seen.some((w) => w.gapMs > 0)).toBe(true);
    expect(seen.some((w) => w.ratio !== undefined && w.ratio > 1.5)).toBe(true);
    pace.close();
  });

  it('while the API is active, pauses every probeEveryMs until no unit is in flight, to measure the API without the migration', async () => {
    const api = fakeApi(() => 3);
    const pace = new Pace({ max: 4, probeEveryMs: 50, probeMs: 20, activity: active, calls: api.calls });
    const starts: number[] = [];
    const original = pace.run.bind(pace);
    pace.run = (work) => original(() => (starts.push(performance.now()), work()));

    await runBeside(pace, api, 600, 1);

    // Pauses of at least probeMs between consecutive unit starts: about one per probeEveryMs.
    const gaps = starts.slice(1).map((t, i) => t - starts[i]);
    expect(gaps.filter((g) => g >= 20).length).toBeGreaterThanOrEqual(4);
    expect(pace.windows.ratio).toBeDefined();
    pace.close();
  });

  it('does not yield with an infinite tolerance: the API counts as quiet', () => {
    const pace = new Pace({ max: 8, tolerance: Infinity, activity: active, calls: noCalls });

    expect(pace.apiActive()).toBe(false);
    expect(pace.allowed()).toBe(1);
  });

  it('counts the API active for quietMs after its last request ended, and uses the active window then', () => {
    const api = { inFlight: 0, lastEndedAt: performance.now() };
    const pace = new Pace({ max: 8, quietMs: 10_000, activity: () => api, calls: noCalls });

    expect(pace.apiActive()).toBe(true);
    expect(pace.allowed()).toBe(1);
    api.lastEndedAt = performance.now() - 20_000;
    expect(pace.apiActive()).toBe(false);
  });

  it('passes on what the unit returns and throws what it throws, freeing its place', async () => {
    const pace = new Pace({ max: 1, activity: quiet, calls: noCalls });

    await expect(pace.run(async () => 7)).resolves.toBe(7);
    await expect(pace.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(pace.run(async () => 'next')).resolves.toBe('next');
  });
});

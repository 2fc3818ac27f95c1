import { describe, expect, it } from 'vitest';
import { Floor, Pace } from '../../../shared/migrations/pace.js';

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

  it('keeps its floor of units per second while the API is always slower beside the migration', async () => {
    // The API's calls take 1 ms alone and 10 ms more per unit in flight: the pace narrows to one
    // unit and waits up to a second between units.
    const api = fakeApi((running) => 1 + 10 * running);
    const pace = new Pace({ max: 16, probeEveryMs: 200, probeMs: 40, gapMaxMs: 1_000, floorPerSecond: 50, activity: active, calls: api.calls });
    let started = 0;
    const original = pace.run.bind(pace);
    pace.run = (work) => original(() => (started++, work()));

    await runBeside(pace, api, 3_000, 4);
    pace.close();

    // The pace held units back (it waits between them), and the floor started them anyway: 3 s at
    // 50 a second, less what the probes' debt still owes at the end.
    expect(pace.windows.gapMs).toBeGreaterThan(0);
    expect(pace.windows.floorStarts).toBeGreaterThanOrEqual(60);
    expect(started).toBeGreaterThanOrEqual(120);
  });
});

describe('Floor', () => {
  /** Asks for a unit every millisecond from `from` to `to` (fake clock), starting it when the floor lets it; returns the times started. */
  function heldThroughout(floor: Floor, from: number, to: number, paceStarts: (t: number) => boolean = () => false): { forced: number[]; paced: number } {
    const forced: number[] = [];
    let paced = 0;
    for (let t = from; t < to; t++) {
      if (paceStarts(t)) {
        floor.started(t, false);
        paced += 1;
      } else if (floor.waitMs(t) === 0) {
        floor.started(t, true);
        forced.push(t);
      }
    }
    return { forced, paced };
  }

  it('starts perSecond units a second when the pace holds every unit', () => {
    const floor = new Floor(25, 0);

    const { forced } = heldThroughout(floor, 0, 10_000);

    expect(forced.length).toBeGreaterThanOrEqual(248);
    expect(forced.length).toBeLessThanOrEqual(250);
  });

  it('adds nothing while the pace itself starts more than the floor', () => {
    const floor = new Floor(25, 0);

    const { forced, paced } = heldThroughout(floor, 0, 10_000, (t) => t % 30 === 0);

    expect(paced).toBe(334);
    expect(forced.length).toBeLessThanOrEqual(1);
  });

  it('makes up the pace\'s share: its own starts and the floor\'s together reach the floor', () => {
    const floor = new Floor(25, 0);

    const { forced, paced } = heldThroughout(floor, 0, 10_000, (t) => t % 100 === 0);

    expect(paced + forced.length).toBeGreaterThanOrEqual(248);
    expect(paced + forced.length).toBeLessThanOrEqual(251);
  });

  it('pays the debt of a probe after it, at most at twice its rate, and keeps no more than 3 s of credit', () => {
    const floor = new Floor(25, 0);

    // 2 s of probe (nothing may start), then units asked for again.
    const after = heldThroughout(floor, 2_000, 6_000).forced;
    const gaps = after.slice(1).map((t, i) => t - after[i]);
    // 60 s nobody asked for a unit (the runner between pages): 3 s of credit kept, not 60.
    const later = heldThroughout(floor, 66_000, 67_000).forced;

    expect(after.length).toBeGreaterThanOrEqual(148);
    expect(after.length).toBeLessThanOrEqual(150);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(20);
    expect(later.length).toBeLessThanOrEqual(50);
  });

  it('never lets a unit start with a floor of 0', () => {
    const floor = new Floor(0, 0);

    expect(heldThroughout(floor, 0, 10_000).forced).toEqual([]);
    expect(floor.waitMs(10_000)).toBe(Infinity);
  });
});

/**
 * The pace of a migration: how many of its units of work (one record's migration, one Scan page)
 * may be in flight at once, and how long to wait between them, so that the API it runs beside
 * keeps its latency.
 *
 * Why: the engine serves the API's requests and the migration's writes alike, so every unit the
 * migration keeps in flight is work a request may find queued ahead of its own calls. With a
 * fixed 32 units in flight, a request waited for tens of them.
 *
 * How: the API's own DynamoDB calls are the measure (shared/data/usage.ts onForegroundCall).
 * - While no request is served (none in flight, the last ended more than `quietMs` ago) nobody
 *   waits on the engine: the quiet window grows by one unit per window of units, up to `max`.
 * - While the API is active, the pace compares the API's calls made beside the migration's units
 *   with calls made without them. Every `probeEveryMs` it starts no unit until none is in flight
 *   and `probeMs` (or three times the API's slower calls) has passed (a probe): the calls that meet
 *   no unit from start to end are the API without the migration.
 *   After each probe, per kind of call (GetItem, Query, TransactWriteItems, ...), the 90th
 *   percentile of the calls made while the migration ran at its pace (whether or not a unit was in
 *   flight at that moment: what the API's callers meet) is held against the 90th percentile of
 *   those made without it. Above
 *   `tolerance` times, the pace slows down (halves the active window; at one unit, waits between
 *   units, from 10 ms doubling up to 1 s); within it, or with too few calls to judge, it speeds up
 *   again (the wait halves away, then the window grows by half). The active window starts at 1 and is kept between activity
 *   spells, so a request arriving after a quiet spell meets the pace the API tolerated last.
 * Where nothing else is served (the deploy-time job on AWS, `npm run migrate -- --wait`) the
 * window grows to `max` and stays there.
 *
 * The floor: however the API's calls fare, the pace lets at least `floorPerSecond` units start
 * per second on average (Floor below): a unit it would hold (a wait between units, a full window)
 * starts anyway when the floor is owed one, except during a probe (whose measure a unit would
 * spoil), whose debt is paid after it. So yielding never starves the migration: a pass of U units
 * (records, Scan pages, listing items deleted) ends within about U / floorPerSecond seconds,
 * whatever the load, as long as `max` units in flight carry that rate.
 */
import { foregroundActivity, onForegroundCall, type ForegroundActivity, type ForegroundCallListener } from '../data/usage.js';

export interface PaceOptions {
  /** Units in flight at most. */
  max: number;
  /** The API counts as active this long after its last request ended (ms). */
  quietMs?: number;
  /** While the API is active, its calls may take this many times (90th percentile) what they take without the migration; Infinity: the migration does not yield. */
  tolerance?: number;
  /** How often, while the API is active, the pace measures the API without the migration (ms). */
  probeEveryMs?: number;
  /** How long a probe holds the migration's units once none is in flight (ms). */
  probeMs?: number;
  /** The longest wait between units (ms; default 1 s). */
  gapMaxMs?: number;
  /** Units per second started whatever the API meets (default PACE_FLOOR_PER_SECOND; 0: no floor). */
  floorPerSecond?: number;
  /** The API's activity (tests pass their own). */
  activity?: () => Readonly<ForegroundActivity>;
  /** The API's calls as they end (tests pass their own). */
  calls?: (listener: ForegroundCallListener) => () => void;
}

/** Defaults: chosen with the `migration` bench scenario (docs/changing-entities.md). */
export const PACE_QUIET_MS = 200;
export const PACE_TOLERANCE = 1.5;
/** The floor's default: units (records, Scan pages) per second, whatever the API's load (docs/changing-entities.md). */
export const PACE_FLOOR_PER_SECOND = 25;
/**
 * Credit the floor keeps (ms of its rate): covers a probe (at most 2 s, and the units in flight
 * draining before it), paid after it; units nobody asked for (the runner between pages) are not.
 */
const FLOOR_CAP_MS = 3_000;
const PROBE_EVERY_MS = 3_000;
const PROBE_MS = 300;
/** The wait between units, once the window is down to one: first, and at most (ms). */
const GAP_FIRST_MS = 10;
const GAP_MAX_MS = 1_000;
/** Samples kept per kind of call: without the migration (across probes), beside it (since the last probe). */
const IDLE_SAMPLES = 64;
const BUSY_SAMPLES = 512;
/** Samples a kind of call needs on both sides before it is judged. */
const MIN_IDLE = 4;
const MIN_BUSY = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function p90(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))];
}

/**
 * The pace's floor, pure (the time is passed in): a credit of units accruing at `perSecond`, kept
 * up to `capMs` of that rate. Every unit that starts spends one, whoever let it start, so units the
 * pace lets through count toward the floor and the floor adds only what they lack. A unit the pace
 * holds may start when one is owed, at most at twice the rate (a debt is paid over the following
 * seconds, not in one burst).
 */
export class Floor {
  private credit = 0;
  private at: number;
  private lastForcedAt = -Infinity;
  private readonly cap: number;

  constructor(
    readonly perSecond: number,
    now: number,
    capMs = FLOOR_CAP_MS,
  ) {
    this.at = now;
    this.cap = Math.max(1, (perSecond * capMs) / 1000);
  }

  private accrue(now: number): void {
    if (this.perSecond > 0) this.credit = Math.min(this.cap, this.credit + ((now - this.at) * this.perSecond) / 1000);
    this.at = now;
  }

  /** How long until the floor lets a held unit start (0: now; Infinity: no floor). */
  waitMs(now: number): number {
    if (!(this.perSecond > 0)) return Infinity;
    this.accrue(now);
    const spacing = this.lastForcedAt + 500 / this.perSecond - now;
    const owed = this.credit >= 1 ? 0 : ((1 - this.credit) * 1000) / this.perSecond;
    return Math.max(0, spacing, owed);
  }

  /** A unit started: let through by the pace, or (`forced`) by the floor. */
  started(now: number, forced: boolean): void {
    this.accrue(now);
    // Down to one unit in advance: a unit the pace starts postpones the floor's next one, no more.
    this.credit = Math.max(-1, this.credit - 1);
    if (forced) this.lastForcedAt = now;
  }
}

export class Pace {
  private quietWindow = 1;
  private activeWindow = 1;
  private gapMs = 0;
  private running = 0;
  private waiting: (() => void)[] = [];
  private lastUnitStartedAt = -Infinity;
  private lastUnitEndedAt = -Infinity;
  private lastProbeAt: number;
  /** While probing: when no unit was in flight any more (undefined until then). */
  private probe: { idleSince?: number } | undefined;
  private readonly idle = new Map<string, number[]>();
  /** The API's recent calls, whatever they met (ms): how long a probe must last. */
  private readonly callMs: number[] = [];
  private readonly busy = new Map<string, number[]>();
  /** The API's calls per kind, beside the migration against without it (90th percentiles), at the last probe. */
  private lastRatio: number | undefined;
  private readonly stopListening: () => void;
  private readonly max: number;
  private readonly quietMs: number;
  private readonly tolerance: number;
  private readonly probeEveryMs: number;
  private readonly probeMs: number;
  private readonly gapMaxMs: number;
  private readonly activity: () => Readonly<ForegroundActivity>;
  private readonly floor: Floor;
  /** Units the floor started (the pace would have held them). */
  private floorStarts = 0;

  constructor(options: PaceOptions) {
    this.max = Math.max(1, Math.floor(options.max));
    this.quietMs = options.quietMs ?? PACE_QUIET_MS;
    this.tolerance = Math.max(1, options.tolerance ?? PACE_TOLERANCE);
    this.probeEveryMs = options.probeEveryMs ?? PROBE_EVERY_MS;
    this.probeMs = options.probeMs ?? PROBE_MS;
    this.gapMaxMs = options.gapMaxMs ?? GAP_MAX_MS;
    this.activity = options.activity ?? foregroundActivity;
    this.lastProbeAt = performance.now();
    this.floor = new Floor(options.floorPerSecond ?? PACE_FLOOR_PER_SECOND, this.lastProbeAt);
    this.stopListening = (options.calls ?? onForegroundCall)((operation, ms) => this.observe(operation, ms));
  }

  /** Stops listening to the API's calls (the run is over). */
  close(): void {
    this.stopListening();
  }

  /** The API is serving a request, or served one less than quietMs ago (never, for a pace that does not yield). */
  apiActive(): boolean {
    if (this.tolerance === Infinity) return false;
    const { inFlight, lastEndedAt } = this.activity();
    return inFlight > 0 || (lastEndedAt > 0 && performance.now() - lastEndedAt < this.quietMs);
  }

  /** Units that may be in flight now. */
  allowed(): number {
    return Math.max(1, Math.floor(this.apiActive() ? this.activeWindow : this.quietWindow));
  }

  /** The pace now: units in flight with the API quiet and active, the wait between units while it is active (ms), the last judged ratio, the units the floor started. */
  get windows(): { quiet: number; active: number; gapMs: number; ratio: number | undefined; floorStarts: number } {
    return { quiet: this.quietWindow, active: this.activeWindow, gapMs: this.gapMs, ratio: this.lastRatio, floorStarts: this.floorStarts };
  }

  /**
   * One of the API's calls ended: a sample without the migration (made whole within a probe, no
   * unit in flight at any moment of it) or beside it (any other: what the API meets while the
   * migration runs at its pace, whether a unit happened to be in flight or not).
   */
  private observe(operation: string, ms: number): void {
    const startedAt = performance.now() - ms;
    this.callMs.push(ms);
    if (this.callMs.length > IDLE_SAMPLES) this.callMs.shift();
    const idleSince = this.probe?.idleSince;
    const metNoUnit = this.running === 0 && this.lastUnitEndedAt <= startedAt;
    if (idleSince !== undefined && startedAt >= idleSince && metNoUnit) this.keep(this.idle, operation, ms, IDLE_SAMPLES);
    else if (!this.probe) this.keep(this.busy, operation, ms, BUSY_SAMPLES);
  }

  /** A probe lasts long enough for the API's slower calls to fit in it whole (three times their 90th percentile, at most 2 s). */
  private probeLength(): number {
    return this.callMs.length ? Math.min(2_000, Math.max(this.probeMs, 3 * p90(this.callMs))) : this.probeMs;
  }

  private keep(samples: Map<string, number[]>, operation: string, ms: number, most: number): void {
    const list = samples.get(operation) ?? [];
    list.push(ms);
    if (list.length > most) list.shift();
    samples.set(operation, list);
  }

  /** After a probe: the worst kind of call's ratio against the tolerance, and the pace adjusted. */
  private judge(): void {
    let ratio: number | undefined;
    for (const [operation, busy] of this.busy) {
      const idle = this.idle.get(operation) ?? [];
      if (idle.length < MIN_IDLE || busy.length < MIN_BUSY) continue;
      ratio = Math.max(ratio ?? 0, p90(busy) / Math.max(0.1, p90(idle)));
      // Judged: the next judgement hears the pace it sets. A kind with too few samples keeps them.
      this.busy.delete(operation);
    }
    if (ratio !== undefined) this.lastRatio = ratio;
    if (ratio !== undefined && ratio > this.tolerance) {
      if (this.activeWindow > 1) this.activeWindow = Math.max(1, Math.floor(this.activeWindow / 2));
      else this.gapMs = Math.min(this.gapMaxMs, this.gapMs ? this.gapMs * 2 : GAP_FIRST_MS);
      return;
    }
    // Within the tolerance, or too few of the API's calls to judge (light traffic meets little
    // queue): faster, the wait halving away first, then half as many units more in flight.
    if (this.gapMs > 0) this.gapMs = this.gapMs / 2 < GAP_FIRST_MS ? 0 : this.gapMs / 2;
    else this.activeWindow = Math.min(this.max, this.activeWindow + Math.max(1, Math.floor(this.activeWindow / 2)));
  }

  /** How long the next unit must wait before it may start (0: now), as far as probes and gaps go. */
  private holdMs(now: number): number {
    if (!this.apiActive()) {
      this.probe = undefined;
      return 0;
    }
    if (!this.probe && now - this.lastProbeAt >= this.probeEveryMs && this.lastUnitStartedAt > this.lastProbeAt) this.probe = {};
    if (this.probe) {
      if (this.running > 0) return 50;
      this.probe.idleSince ??= now;
      const left = this.probe.idleSince + this.probeLength() - now;
      if (left > 0) return left;
      this.probe = undefined;
      this.lastProbeAt = now;
      this.judge();
    }
    if (this.gapMs > 0) return Math.max(0, this.lastUnitEndedAt + this.gapMs - now);
    return 0;
  }

  /** Runs `work` as one unit, once the pace (or its floor) lets it start. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    let forced = false;
    for (;;) {
      const now = performance.now();
      const hold = this.holdMs(now);
      const full = this.running >= this.allowed();
      if (hold <= 0 && !full) break;
      // The floor: not during a probe (a unit would spoil its measure), never past `max`.
      const floorMs = this.probe || this.running >= this.max ? Infinity : this.floor.waitMs(now);
      if (floorMs <= 0) {
        forced = true;
        break;
      }
      if (hold > 0) await sleep(Math.min(hold, floorMs));
      else {
        const freed = new Promise<void>((resolve) => this.waiting.push(resolve));
        await (Number.isFinite(floorMs) ? Promise.race([freed, sleep(floorMs)]) : freed);
      }
    }
    this.floor.started(performance.now(), forced);
    if (forced) this.floorStarts += 1;
    this.running += 1;
    this.lastUnitStartedAt = performance.now();
    const metApi = this.apiActive();
    try {
      return await work();
    } finally {
      this.running -= 1;
      this.lastUnitEndedAt = performance.now();
      if (!metApi && !this.apiActive()) this.quietWindow = Math.min(this.max, this.quietWindow + 1 / this.quietWindow);
      const waiting = this.waiting;
      this.waiting = [];
      for (const wake of waiting) wake();
    }
  }
}

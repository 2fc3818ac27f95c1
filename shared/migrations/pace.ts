/**
 * The pace of a migration: how many of its units of work (one record's migration, one Scan page)
 * may be in flight at once, so that the API it runs beside keeps its latency.
 *
 * Why: the engine serves the API's requests and the migration's writes alike, so every unit the
 * migration keeps in flight is work a request may find queued ahead of its own calls. With a
 * fixed 32 units in flight, a request waited for tens of them; and past what the engine works on
 * at once, more in flight does not make the migration faster, only the queue longer (and the
 * units conflict on the new partition's counter items, and retry).
 *
 * How: a window of units in flight, additive increase and multiplicative decrease (AIMD), on two
 * signals:
 * - the API's activity in this process (shared/data/usage.ts foregroundActivity): while no request
 *   is served (none in flight, the last ended more than `quietMs` ago) nobody waits on the engine,
 *   and the quiet window grows by 1/window per unit (one unit more per window of units) up to
 *   `max`;
 * - while the API is active, the latency of the migration's own units: the engine's queue delays
 *   them as it delays every call of a request, so a unit taking more than `tolerance` times the
 *   quickest recent one (the engine with no queue) means requests are being slowed by as much:
 *   the active window is halved (once per window of units); otherwise it grows as above. It
 *   starts at 1, and is kept between activity spells, so a request arriving after a quiet spell
 *   meets the pace the API tolerated last, not the quiet window.
 * Where nothing else is served (the deploy-time job on AWS, `npm run migrate -- --wait`) the
 * window grows to `max` and stays there.
 */
import { foregroundActivity, type ForegroundActivity } from '../data/index.js';

export interface PaceOptions {
  /** Units in flight at most. */
  max: number;
  /** The API counts as active this long after its last request ended (ms). */
  quietMs?: number;
  /** While the API is active, a unit may take this many times the quickest recent one. */
  tolerance?: number;
  /** The API's activity (tests pass their own). */
  activity?: () => Readonly<ForegroundActivity>;
}

/** Defaults: chosen with the `migration` bench scenario (docs/changing-entities.md). */
export const PACE_QUIET_MS = 200;
export const PACE_TOLERANCE = 1.5;
/** Units per bucket of the quickest-recent-unit estimate (the lower of this bucket's and the last). */
const BASELINE_BUCKET = 200;
/** Units quicker than this made no call (a record already at the target): no latency sample. */
const MIN_SAMPLE_MS = 0.5;

export class Pace {
  private quietWindow = 1;
  private activeWindow = 1;
  private running = 0;
  private waiting: (() => void)[] = [];
  /** Units since the active window was last halved: it is halved at most once per window. */
  private sinceDecrease = 0;
  private baseline = { current: Infinity, previous: Infinity, samples: 0 };
  private readonly max: number;
  private readonly quietMs: number;
  private readonly tolerance: number;
  private readonly activity: () => Readonly<ForegroundActivity>;

  constructor(options: PaceOptions) {
    this.max = Math.max(1, Math.floor(options.max));
    this.quietMs = options.quietMs ?? PACE_QUIET_MS;
    this.tolerance = Math.max(1, options.tolerance ?? PACE_TOLERANCE);
    this.activity = options.activity ?? foregroundActivity;
  }

  /** The API is serving a request, or served one less than quietMs ago. */
  apiActive(): boolean {
    const { inFlight, lastEndedAt } = this.activity();
    return inFlight > 0 || (lastEndedAt > 0 && performance.now() - lastEndedAt < this.quietMs);
  }

  /** Units that may be in flight now. */
  allowed(): number {
    return Math.max(1, Math.floor(this.apiActive() ? this.activeWindow : this.quietWindow));
  }

  /** The windows now (units in flight with the API quiet, and active). */
  get windows(): { quiet: number; active: number } {
    return { quiet: this.quietWindow, active: this.activeWindow };
  }

  /** The quickest recent unit (ms), the engine with no queue. */
  private quickest(): number {
    return Math.min(this.baseline.current, this.baseline.previous);
  }

  private sample(ms: number): void {
    const b = this.baseline;
    b.current = Math.min(b.current, ms);
    if (++b.samples >= BASELINE_BUCKET) this.baseline = { current: Infinity, previous: b.current, samples: 0 };
  }

  /** Runs `work` as one unit, once the pace lets it start; `measured`: a unit whose latency is a sample (alike units). */
  async run<T>(work: () => Promise<T>, measured = true): Promise<T> {
    while (this.running >= this.allowed()) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
    const metApi = this.apiActive();
    const started = performance.now();
    try {
      return await work();
    } finally {
      const took = performance.now() - started;
      this.running -= 1;
      const sampled = measured && took >= MIN_SAMPLE_MS;
      const slow = sampled && took > this.tolerance * this.quickest();
      if (sampled) this.sample(took);
      if (metApi || this.apiActive()) {
        this.sinceDecrease += 1;
        if (slow && this.sinceDecrease >= this.activeWindow) {
          this.activeWindow = Math.max(1, this.activeWindow / 2);
          this.sinceDecrease = 0;
        } else if (!slow) this.activeWindow = Math.min(this.max, this.activeWindow + 1 / this.activeWindow);
      } else this.quietWindow = Math.min(this.max, this.quietWindow + 1 / this.quietWindow);
      const waiting = this.waiting;
      this.waiting = [];
      for (const wake of waiting) wake();
    }
  }
}

/** What a benchmark scenario module (bench/scenarios/*.ts) exports and returns. */

export interface BenchRow {
  /** Scenario name, e.g. "auth: warm API-key request". */
  scenario: string;
  /** What was measured, e.g. "p50". */
  metric: string;
  value: number | string;
  unit?: string;
  /** The figure to reach, as text ("≤ 0.3 ms"). */
  target?: string;
  /** Whether the target is met (absent when there is no target). */
  pass?: boolean;
  note?: string;
}

export interface LocalRuntime {
  /** Base URL of the local gateway (http://127.0.0.1:<port>). */
  url: string;
  dynamoEndpoint: string;
  /** The bootstrap admin (platform operator) of this run's fresh engine. */
  admin: { email: string; password: string };
}

export interface BenchContext {
  /** One DynamoDB Local (in memory) + local gateway for the whole run, started on first use. */
  local(): Promise<LocalRuntime>;
  /** Scale factor for iteration counts (BENCH_SCALE, default 1). */
  scale: number;
}

export interface BenchScenarioModule {
  /** Runs the module's scenarios; must leave the process as it found it (restore mocks). */
  run(context: BenchContext): Promise<BenchRow[]>;
  /** Order among modules (lower first; in-process scenarios before HTTP ones). Default 100. */
  order?: number;
  /** false: the module never calls context.local() (the run starts no local runtime for it). */
  usesLocal?: boolean;
  /** true: runs for tens of minutes; only when BENCH_ONLY names it or BENCH_ALL=1. */
  long?: boolean;
}

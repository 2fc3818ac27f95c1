/**
 * What one request spent on DynamoDB: calls, wall time with a call in flight, and the capacity
 * units DynamoDB reported (ReturnConsumedCapacity). Kept per request in an AsyncLocalStorage, so
 * the one client's middleware (client.ts) can add to it without any caller passing it along.
 * A request run inside another (a batch's sub-request) adds to its own usage and to every
 * enclosing one, so a batch's figures include its sub-requests'.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export class RequestUsage {
  readonly startedAt = performance.now();
  calls = 0;
  /** Wall-clock milliseconds during which at least one DynamoDB call was in flight. */
  dbMs = 0;
  rcu = 0;
  wcu = 0;
  /** Milliseconds spent authenticating the caller (its DynamoDB time included). */
  authMs = 0;
  /** Of authMs, the part with a DynamoDB call in flight. */
  authDbMs = 0;
  private inFlight = 0;
  private busySince = 0;

  constructor(readonly parent?: RequestUsage) {}

  /** Each enclosing usage, this one first. */
  private *chain(): Generator<RequestUsage> {
    for (let usage: RequestUsage | undefined = this; usage; usage = usage.parent) yield usage;
  }

  callStarted(now = performance.now()): void {
    for (const usage of this.chain()) {
      if (usage.inFlight++ === 0) usage.busySince = now;
    }
  }

  callEnded(capacity: { rcu: number; wcu: number }, now = performance.now()): void {
    for (const usage of this.chain()) {
      usage.calls += 1;
      usage.rcu += capacity.rcu;
      usage.wcu += capacity.wcu;
      if (--usage.inFlight === 0) usage.dbMs += now - usage.busySince;
    }
  }

  /** DynamoDB time so far, counting a call still in flight up to now. */
  dbMsNow(now = performance.now()): number {
    return this.dbMs + (this.inFlight > 0 ? now - this.busySince : 0);
  }
}

const storage = new AsyncLocalStorage<RequestUsage>();

/** Runs `work` with a usage of its own (nested in the current one, if any). */
export function withRequestUsage<T>(work: (usage: RequestUsage) => T): T {
  const usage = new RequestUsage(storage.getStore());
  if (usage.parent) return storage.run(usage, () => work(usage));
  foreground.inFlight += 1;
  const ended = () => {
    foreground.inFlight -= 1;
    foreground.lastEndedAt = performance.now();
  };
  let result: T;
  try {
    result = storage.run(usage, () => work(usage));
  } catch (error) {
    ended();
    throw error;
  }
  if (result instanceof Promise) result.then(ended, ended);
  else ended();
  return result;
}

/** Requests being served by this process (sub-requests not counted again), and when the last one ended. */
export interface ForegroundActivity {
  inFlight: number;
  /** performance.now() when the last request ended (0: none yet). */
  lastEndedAt: number;
}

const foreground: ForegroundActivity = { inFlight: 0, lastEndedAt: 0 };

/**
 * The API's activity in this process: the migration runner yields to it
 * (shared/migrations/pace.ts), so that requests do not queue behind its writes.
 */
export function foregroundActivity(): Readonly<ForegroundActivity> {
  return foreground;
}

/** Hears each of the API's DynamoDB calls as it ends: its operation (GetItem, Query, ...) and how long it took (ms). */
export type ForegroundCallListener = (operation: string, ms: number) => void;
const callListeners = new Set<ForegroundCallListener>();

/**
 * The API's DynamoDB calls, as they end: the migration's pace holds their latency beside its
 * units against their latency without them. Returns the function that stops listening.
 */
export function onForegroundCall(listener: ForegroundCallListener): () => void {
  callListeners.add(listener);
  return () => callListeners.delete(listener);
}

/** A call made for a request ended (shared/data/call-accounting.ts). */
export function foregroundCallEnded(operation: string, ms: number): void {
  for (const listener of callListeners) listener(operation, ms);
}

/** The usage of the request being served, if any. */
export function currentUsage(): RequestUsage | undefined {
  return storage.getStore();
}

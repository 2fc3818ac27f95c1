/**
 * Engine-busy errors, retried in place. DynamoDB answers a request it could not serve for load
 * with ProvisionedThroughputExceededException, ThrottlingException or RequestLimitExceeded (a
 * transaction also with a `ThrottlingError` cancellation reason); DynamoDB Local answers a
 * request that waited 10 s for its table lock with a 500 "timed out ... waiting for a lock". In
 * every one of those cases nothing was written, so the same work may be sent again, changed or
 * not. They say "come back in a moment", not "this work is bad": callers retry them here, with
 * full jitter, instead of failing a request, a webhook fan-out or a delivery attempt.
 */

/** Attempts in all, the first included. */
export const BUSY_ATTEMPTS = 8;
const BUSY_BASE_MS = 50;
const BUSY_CAP_MS = 2_000;

interface AwsError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  CancellationReasons?: { Code?: string }[];
}

const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'Throttling']);

export function isEngineBusy(error: unknown): boolean {
  const e = (error ?? {}) as AwsError;
  if (THROTTLED.has(e.name ?? '')) return true;
  if (e.name === 'TransactionCanceledException') {
    const reasons = e.CancellationReasons ?? [];
    // Busy only when throttling is all that stopped it (a failed condition is the caller's to judge).
    return reasons.some((r) => r.Code === 'ThrottlingError') && reasons.every((r) => r.Code === 'ThrottlingError' || r.Code === 'None' || r.Code === undefined);
  }
  return /waiting for a lock/i.test(e.message ?? '');
}

/** Full jitter: a random wait up to min(cap, base × 2^attempt). */
export function busyDelay(attempt: number, random = Math.random): number {
  return Math.floor(random() * Math.min(BUSY_CAP_MS, BUSY_BASE_MS * 2 ** attempt));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `work` again while it fails with an engine-busy error, up to `attempts` in all; any other
 * error, or the last busy one, is thrown. `work` is called afresh each time (it may restamp).
 */
export async function whileBusy<T>(work: (attempt: number) => Promise<T>, options: { attempts?: number; onBusy?: (error: unknown, attempt: number) => void } = {}): Promise<T> {
  const attempts = options.attempts ?? BUSY_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      if (!isEngineBusy(error) || attempt >= attempts) throw error;
      options.onBusy?.(error, attempt);
      await sleep(busyDelay(attempt));
    }
  }
}

/**
 * The order of the timeouts a request meets (checked for every function by
 * test/infra/aws/stack.test.ts):
 *
 *   handler's own answer (504 in the envelope)  <  function timeout  <  integration timeout
 *
 * API Gateway waits at most 29 s for a REST integration, and that time includes a cold start's
 * init phase, which Lambda does not count in the function's timeout and allows up to 10 s. So a
 * function of the API times out at 29 − 10 = 19 s: even the longest init leaves its answer in
 * time. The middleware stack answers for itself DEADLINE_MARGIN_MS before the function's end
 * (middy's early timeout, from context.getRemainingTimeInMillis()), so the client gets the
 * product's envelope with Retry-After instead of the gateway's bare 504 or a killed invocation.
 * A streamed response (the SSE stream) runs up to API Gateway's 15-minute streaming limit and
 * ends itself before that (shared/http/operations/stream.ts).
 */
import { ApiError } from '../errors.js';

/** API Gateway's REST integration timeout. */
export const INTEGRATION_TIMEOUT_SECONDS = 29;
/** The longest init phase Lambda allows a function (on-demand); not counted in its timeout. */
export const MAX_INIT_SECONDS = 10;
/** The timeout of every API function but a streaming one. */
export const API_FUNCTION_TIMEOUT_SECONDS = INTEGRATION_TIMEOUT_SECONDS - MAX_INIT_SECONDS;
/** Left for the envelope's answer (and the idempotency record's release) once the handler is given up. */
export const DEADLINE_MARGIN_MS = 1_500;
/** What the client is told to wait before retrying. */
export const DEADLINE_RETRY_AFTER_SECONDS = 1;

/** The answer of a request that ran out of time: 504 in the envelope, with Retry-After. */
export function deadlineExceeded(): ApiError {
  return new ApiError(504, 'GATEWAY_TIMEOUT', 'The request did not finish in time; retry it (with the same Idempotency-Key for a POST)', {
    headers: { 'Retry-After': String(DEADLINE_RETRY_AFTER_SECONDS) },
    extra: { retryAfter: DEADLINE_RETRY_AFTER_SECONDS },
  });
}

/** middy's options that make the stack answer deadlineExceeded() before the function's end. */
export const deadlineOptions = {
  timeoutEarlyInMillis: DEADLINE_MARGIN_MS,
  timeoutEarlyResponse: (): never => {
    throw deadlineExceeded();
  },
} as const;

/**
 * The batch body (SPEC.md Batch requests, CONTRACT.md): {requests: [{id, method, path, body?}]},
 * 1 to MAX_BATCH_REQUESTS sub-requests, each checked before any runs. Anything wrong answers 422
 * VALIDATION_FAILED with details keyed by `requests[<index>].<field>`.
 */
import { ValidationError } from '../errors.js';

export const MAX_BATCH_REQUESTS = 20;
export const BATCH_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;
export type BatchMethod = (typeof BATCH_METHODS)[number];

export interface BatchItem {
  id: string;
  method: BatchMethod;
  /** Relative to /api/v1, starting with `/`; may carry a query string. */
  path: string;
  body?: Record<string, unknown>;
}

const MAX_ID_LENGTH = 128;
const MAX_PATH_LENGTH = 2048;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function parseBatch(body: unknown): BatchItem[] {
  const requests = isObject(body) ? body.requests : undefined;
  if (!Array.isArray(requests)) throw new ValidationError({ requests: 'is required: an array of {id, method, path, body?}' });
  if (requests.length === 0) throw new ValidationError({ requests: `must contain 1 to ${MAX_BATCH_REQUESTS} requests` });
  if (requests.length > MAX_BATCH_REQUESTS) {
    throw new ValidationError({ requests: `must contain at most ${MAX_BATCH_REQUESTS} requests, got ${requests.length}` });
  }
  const details: Record<string, string> = {};
  const seen = new Set<string>();
  const items = requests.map((raw, i): BatchItem => {
    const at = `requests[${i}]`;
    if (!isObject(raw)) {
      details[at] = 'must be an object {id, method, path, body?}';
      return undefined as never;
    }
    const { id, method, path, body } = raw;
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) details[`${at}.id`] = `is required: a string of 1 to ${MAX_ID_LENGTH} characters`;
    else if (seen.has(id)) details[`${at}.id`] = `duplicates the id of an earlier request ('${id}')`;
    else seen.add(id);
    const upper = typeof method === 'string' ? method.toUpperCase() : undefined;
    if (!upper || !(BATCH_METHODS as readonly string[]).includes(upper)) details[`${at}.method`] = `must be one of ${BATCH_METHODS.join(', ')}`;
    if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//') || path.length > MAX_PATH_LENGTH) {
      details[`${at}.path`] = `is required: a path relative to /api/v1 starting with '/', e.g. /tasks/<id>`;
    }
    if (body !== undefined && !isObject(body)) details[`${at}.body`] = 'must be a JSON object when given';
    return { id: id as string, method: upper as BatchMethod, path: path as string, ...(body !== undefined ? { body: body as Record<string, unknown> } : {}) };
  });
  if (Object.keys(details).length) throw new ValidationError(details, 'The batch is invalid');
  return items;
}

/**
 * How a batch counts against the caller's rate limit (CONTRACT.md: each sub-request counts):
 * a batch of N sub-requests costs N. The sub-requests are counted by the rate-limit middleware of
 * their own stacks; the batch request itself is not counted on top, except when it may be
 * answered without running any sub-request: a body that is not a valid batch (refused as a
 * whole), an Idempotency-Key (a replay runs nothing) or sub-requests none of which reaches a
 * family (unknown paths, a nested batch). Those count once, like any request, so
 * that no request of an authenticated caller goes uncounted.
 */
import type { ApiRequest } from '../../shared/http/types.js';
import { subRequestTarget } from './sub-request.js';
import { parseBatch } from '../../shared/batch/validate.js';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * Whether the request counts itself (the batch stack's `countsItself` option): every request but a
 * batch that will run its sub-requests.
 */
export function countsItself(req: Pick<ApiRequest, 'route' | 'headers' | 'rawBody'>): boolean {
  if (req.route.family !== 'batch') return true;
  if (req.headers['idempotency-key'] !== undefined) return true;
  if (!req.rawBody || !JSON_TYPE.test(req.headers['content-type'] ?? '')) return true;
  try {
    const items = parseBatch(JSON.parse(req.rawBody.toString('utf8')));
    // Sub-requests answered before reaching a stack (unknown path, nested batch) count nothing:
    // when no sub-request runs, the batch counts itself.
    const outer = { headers: req.headers, requestId: 'count', ip: '' };
    return items.every((item, i) => 'error' in subRequestTarget(outer, item, i));
  } catch {
    return true;
  }
}

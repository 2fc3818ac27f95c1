/**
 * How a batch counts against the caller's rate limit (CONTRACT.md: each sub-request counts):
 * a batch of N sub-requests costs N. The sub-requests are counted by the rate-limit middleware of
 * their own stacks; the batch request itself is not counted on top, except when it may be
 * answered without running any sub-request: a body that is not a valid batch (refused as a
 * whole), an Idempotency-Key (a replay runs nothing) or sub-requests none of which reaches a
 * family (unknown paths, a nested batch). Those count once, like any request, so
 * that no request of an authenticated caller goes uncounted. A batch that runs its sub-requests
 * leases their tokens first, with one update (shared/http/rate-limit.ts), so they spend tokens
 * without writing.
 */
import type { ApiRequest } from '../../shared/http/types.js';
import { subRequestTarget } from './sub-request.js';
import { parseBatch } from '../../shared/batch/validate.js';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/** How many sub-requests of a batch will reach a family's stack (0: the request counts itself). */
export function subRequestsRun(req: Pick<ApiRequest, 'route' | 'headers' | 'rawBody'>): number {
  if (req.route.family !== 'batch') return 0;
  if (req.headers['idempotency-key'] !== undefined) return 0;
  if (!req.rawBody || !JSON_TYPE.test(req.headers['content-type'] ?? '')) return 0;
  try {
    const items = parseBatch(JSON.parse(req.rawBody.toString('utf8')));
    // Sub-requests answered before reaching a stack (unknown path, nested batch) count nothing:
    // when no sub-request runs, the batch counts itself.
    const outer = { headers: req.headers, requestId: 'count', ip: '' };
    return items.filter((item, i) => !('error' in subRequestTarget(outer, item, i))).length;
  } catch {
    return 0;
  }
}

/**
 * POST /api/v1/batch: up to 20 sub-requests, run in order in-process (shared/batch/run.ts).
 * The outer answer is always 200 {success: true, responses: [{id, status, body}]}.
 */
import { runBatch } from '../../shared/batch/run.js';
import { createApiHandler } from '../../shared/http/stack.js';
import { routeKey } from '../../shared/routes.js';

export const handler = createApiHandler({
  [routeKey('POST', '/api/v1/batch')]: async (req) => ({ status: 200, raw: { success: true, responses: await runBatch(req) } }),
});

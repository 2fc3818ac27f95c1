/**
 * POST /api/v1/batch: up to 20 sub-requests, run in order in-process (functions/batch/run.ts).
 * The outer answer is always 200 {success: true, responses: [{id, status, body}]}.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import { routeKey } from '../../shared/core-routes.js';
import { subRequestsRun } from './counting.js';
import { runBatch } from './run.js';

export const handler = createApiHandler(
  {
    [routeKey('POST', '/api/v1/batch')]: async (req) => ({ status: 200, raw: { success: true, responses: await runBatch(req) } }),
  },
  // A batch is counted by its sub-requests (each through its own family's stack).
  { subRequestsCounted: subRequestsRun },
);

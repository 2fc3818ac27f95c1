/**
 * POST /api/v1/batch: up to 20 sub-requests, run in order in-process (functions/batch/run.ts).
 * The outer answer is always 200 {success: true, operationId, responses: [{id, status, body}]}.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import type { FamilyOperations } from '../../shared/http/types.js';
import { subRequestsRun } from './counting.js';
import { runBatch } from './run.js';

const operations: FamilyOperations<'batch'> = {
  runBatch: async (req) => ({ status: 200, raw: { success: true, ...(await runBatch(req)) } }),
};

export const handler = createApiHandler(
  operations,
  // A batch is counted by its sub-requests (each through its own family's stack).
  { subRequestsCounted: subRequestsRun },
);

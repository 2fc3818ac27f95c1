/**
 * Handlers of plugins/ai.plugin.ts: bodies arrive checked against the route's schema, defaults
 * applied. The service, and the AWS SDK under it, load with the first request that needs them,
 * not with the plugins function's cold start.
 */
import type { GenerateInput } from '../shared/ai/service.js';
import type { ApiRequest, Reply } from '../shared/http/types.js';
import { onFirstUse } from '../shared/on-first-use.js';

const service = onFirstUse(() => import('../shared/ai/service.js'));

export async function generate(req: ApiRequest): Promise<Reply> {
  return { status: 200, data: await (await service()).generate(req.auth!, req.body as GenerateInput) };
}

export async function credits(req: ApiRequest): Promise<Reply> {
  return { data: await (await service()).credits(req.auth!) };
}

export async function userCredits(req: ApiRequest): Promise<Reply> {
  return { data: await (await service()).userCredits(req.auth!, req.params.userId) };
}

export async function grantCredits(req: ApiRequest): Promise<Reply> {
  const { amount, reason } = req.body as { amount: number; reason?: string };
  return { status: 200, data: await (await service()).grant(req.auth!, req.params.userId, amount, reason) };
}

/**
 * Handlers of plugins/ai.plugin.ts: bodies arrive checked against the route's schema, defaults
 * applied, typed by it (PluginHandlers). The service, and the AWS SDK under it, load with the
 * first request that needs them, not with the plugins function's cold start.
 */
import type { PluginHandlers } from '../shared/http/types.js';
import { onFirstUse } from '../shared/on-first-use.js';
import type ai from './ai.plugin.js';

const service = onFirstUse(() => import('../shared/ai/service.js'));

export const { generate, credits, userCredits, grantCredits }: PluginHandlers<typeof ai> = {
  generate: async (req) => ({ status: 200, data: await (await service()).generate(req.auth!, req.body) }),
  credits: async (req) => ({ data: await (await service()).credits(req.auth!) }),
  userCredits: async (req) => ({ data: await (await service()).userCredits(req.auth!, req.params.userId) }),
  grantCredits: async (req) => {
    const { amount, reason } = req.body;
    return { status: 200, data: await (await service()).grant(req.auth!, req.params.userId, amount, reason) };
  },
};

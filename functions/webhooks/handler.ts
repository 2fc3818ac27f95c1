/**
 * The webhooks family's HTTP operations: registrations, delivery log, replay, test ping, and the
 * inbound provider receivers. Fan-out and delivery run in their own functions (fanout.ts,
 * deliver.ts). Thin: every decision is in shared/webhooks/, loaded (with the AWS SDK) on first use.
 */
import { config } from '../../shared/config.js';
import { BadRequestError } from '../../shared/errors.js';
import { createApiHandler, type StackOptions } from '../../shared/http/stack.js';
import type { FamilyOperations } from '../../shared/http/types.js';

function limitOf(value: string | undefined): number {
  if (value === undefined) return 20;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new BadRequestError('limit must be a positive integer', { limit: 'must be a positive integer' });
  return Math.min(n, 100);
}

async function loadOperations() {
  const [
    { receiveInbound },
    { changeWebhook, createWebhook, listTenantWebhooks, pingWebhook, readWebhook, removeWebhook, retryDelivery, webhookBodyProblems, webhookDeliveries },
    { precompiled: bodies },
  ] = await Promise.all([
    import('../../shared/webhooks/inbound.js'),
    import('../../shared/webhooks/registrations.js'),
    import('../../shared/http/bodies/webhooks.generated.js'),
  ]);

  // The bodies arrive checked against their declared schemas (shared/route-declarations/webhooks.ts), typed by them.
  const operations: FamilyOperations<'webhooks'> = {
    createWebhook: async (req) => ({ status: 201, data: await createWebhook(req.auth!, req.body) }),
    listWebhooks: async (req) => ({ data: await listTenantWebhooks(req.auth!) }),
    getWebhook: async (req) => ({ data: await readWebhook(req.auth!, req.params.id) }),
    updateWebhook: async (req) => ({ data: await changeWebhook(req.auth!, req.params.id, req.body) }),
    deleteWebhook: async (req) => {
      await removeWebhook(req.auth!, req.params.id);
      return { status: 200, data: { id: req.params.id, deleted: true }, message: 'Webhook deleted' };
    },
    receiveProviderWebhook: async (req) => ({
      status: 200,
      raw: await receiveInbound(req.params.id, config().webhooks.inboundSecrets, req.rawBody, req.headers),
    }),
    listWebhookDeliveries: async (req) => {
      const limit = limitOf(req.query.limit);
      const { deliveries: items, nextCursor } = await webhookDeliveries(req.auth!, req.params.id, limit, req.query.cursor);
      return { data: items, pagination: { page: 1, limit, total: items.length, totalPages: 1, hasNext: nextCursor !== null, hasPrev: req.query.cursor !== undefined, nextCursor } };
    },
    retryWebhookDelivery: async (req) => ({
      status: 200,
      data: await retryDelivery(req.auth!, req.params.id, req.params.deliveryId),
    }),
    pingWebhook: async (req) => ({ status: 200, data: await pingWebhook(req.auth!, req.params.id) }),
  };
  // The bodies are checked against their declarations by the stack; the target rule and the
  // known events join a refused body's answer.
  const options: StackOptions = { bodies, bodyProblems: (req, refused) => webhookBodyProblems((req.body ?? {}) as Record<string, unknown>, refused) };
  return { operations, options };
}

export const handler = createApiHandler(loadOperations);

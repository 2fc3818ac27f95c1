/**
 * The webhooks family's HTTP operations: registrations, delivery log, replay, test ping, and the
 * inbound provider receivers. Fan-out and delivery run in their own functions (fanout.ts,
 * deliver.ts). Thin: every decision is in shared/webhooks/, loaded (with the AWS SDK) on first use.
 */
import { config } from '../../shared/config.js';
import { BadRequestError } from '../../shared/errors.js';
import { createApiHandler, type Operations, type StackOptions } from '../../shared/http/stack.js';
import type { WebhookChange, WebhookInput } from '../../shared/webhooks/registrations.js';
import { routeKey } from '../../shared/core-routes.js';

const V1 = '/api/v1';

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

  const operations: Operations = {
    [routeKey('POST', `${V1}/webhooks`)]: async (req) => ({ status: 201, data: await createWebhook(req.auth!, req.body as unknown as WebhookInput) }),
    [routeKey('GET', `${V1}/webhooks`)]: async (req) => ({ data: await listTenantWebhooks(req.auth!) }),
    [routeKey('GET', `${V1}/webhooks/{id}`)]: async (req) => ({ data: await readWebhook(req.auth!, req.params.id) }),
    [routeKey('PATCH', `${V1}/webhooks/{id}`)]: async (req) => ({ data: await changeWebhook(req.auth!, req.params.id, req.body as WebhookChange) }),
    [routeKey('DELETE', `${V1}/webhooks/{id}`)]: async (req) => {
      await removeWebhook(req.auth!, req.params.id);
      return { status: 200, data: { id: req.params.id, deleted: true }, message: 'Webhook deleted' };
    },
    [routeKey('POST', `${V1}/webhooks/{id}`)]: async (req) => ({
      status: 200,
      raw: await receiveInbound(req.params.id, config().webhooks.inboundSecrets, req.rawBody, req.headers),
    }),
    [routeKey('GET', `${V1}/webhooks/{id}/deliveries`)]: async (req) => {
      const limit = limitOf(req.query.limit);
      const { deliveries: items, nextCursor } = await webhookDeliveries(req.auth!, req.params.id, limit, req.query.cursor);
      return { data: items, pagination: { page: 1, limit, total: items.length, totalPages: 1, hasNext: nextCursor !== null, hasPrev: req.query.cursor !== undefined, nextCursor } };
    },
    [routeKey('POST', `${V1}/webhooks/{id}/deliveries/{deliveryId}/retry`)]: async (req) => ({
      status: 200,
      data: await retryDelivery(req.auth!, req.params.id, req.params.deliveryId),
    }),
    [routeKey('POST', `${V1}/webhooks/{id}/test`)]: async (req) => ({ status: 200, data: await pingWebhook(req.auth!, req.params.id) }),
  };
  // The bodies are checked against their declarations by the stack; the target rule and the
  // known events join a refused body's answer.
  const options: StackOptions = { bodies, bodyProblems: (req, refused) => webhookBodyProblems((req.body ?? {}) as Record<string, unknown>, refused) };
  return { operations, options };
}

export const handler = createApiHandler(loadOperations);

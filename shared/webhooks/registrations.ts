/**
 * Webhook registrations of a tenant: the target URL rule (ssrf.ts) and known events (the
 * body's shape is its route's declared schema, checked by the stack), the secret
 * encrypted at rest (secrets.ts). A webhook belongs to its tenant: another tenant's id is 404.
 * An admin manages every webhook of the tenant; a user only the ones they registered.
 */
import { randomBytes } from 'node:crypto';
import { config } from '../config.js';
import { NotFoundError, ValidationError, ConflictError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { newId } from '../ids.js';
import { loadRegistry } from '../registry/index.js';
import { knownEventTypes, payloadOf, TEST_EVENT } from './events.js';
import { deliverNow } from './delivery.js';
import { encryptSecret } from './secrets.js';
import { targetUrlProblem, type Resolver } from './ssrf.js';
import {
  createDelivery,
  deleteWebhook,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  pendingDelivery,
  putWebhook,
  updateWebhook,
  type StoredDelivery,
  type StoredWebhook,
} from './store.js';
import { invalidateSubscriptions } from './subscriptions.js';

export const MAX_WEBHOOKS_PER_TENANT = 50;

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  status: StoredWebhook['status'];
  createdAt: string;
  updatedAt: string;
  disabledAt?: string;
}

export function present(webhook: StoredWebhook): WebhookView {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    status: webhook.status,
    createdAt: webhook.createdAt,
    updatedAt: webhook.updatedAt,
    ...(webhook.disabledAt ? { disabledAt: webhook.disabledAt } : {}),
  };
}

export function presentDelivery(d: StoredDelivery) {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    responseCode: d.responseCode,
    responseTimeMs: d.responseTimeMs,
    error: d.error,
    lastAttemptAt: d.lastAttemptAt,
    nextAttemptAt: d.nextAttemptAt,
    createdAt: d.createdAt,
  };
}

let resolver: Resolver | undefined;
/** Lets a unit test answer DNS questions (undefined: the system resolver again). */
export function useResolver(r: Resolver | undefined): void {
  resolver = r;
}

/** A registration, as its route declares it (shared/core-routes.ts; the stack has checked it). */
export interface WebhookInput {
  url: string;
  events: string[];
  secret: string;
}

/** A change of a registration, as its route declares it. */
export interface WebhookChange extends Partial<WebhookInput> {
  status?: 'active' | 'disabled';
}

/**
 * What a webhook body's schema (shared/core-routes.ts, checked by the middleware stack) cannot
 * say: the URL follows the target rule (https, a public address: it resolves the name), and the
 * events are those of registered entities. `refused`: the fields the schema already refused,
 * left alone, so that one answer names every field.
 */
export async function webhookBodyProblems(body: Record<string, unknown>, refused: Readonly<Record<string, string>> = {}): Promise<Record<string, string>> {
  const details: Record<string, string> = {};
  if (!refused.url && typeof body.url === 'string') {
    const problem = await targetUrlProblem(body.url, { allowInsecure: config().webhooks.allowInsecure, resolve: resolver });
    if (problem) details.url = problem;
  }
  if (!refused.events && Array.isArray(body.events)) {
    const known = knownEventTypes((await loadRegistry()).values());
    const unknown = body.events.filter((e) => typeof e !== 'string' || !known.has(e));
    if (unknown.length) details.events = `unknown event ${unknown.map((e) => `'${String(e)}'`).join(', ')}; known: ${[...known].join(', ')}`;
  }
  return details;
}

async function checkWebhookBody(body: WebhookChange): Promise<void> {
  const details = await webhookBodyProblems(body as Record<string, unknown>);
  if (Object.keys(details).length) throw new ValidationError(details);
}

export async function createWebhook(auth: AuthContext, body: WebhookInput): Promise<WebhookView> {
  await checkWebhookBody(body);
  const { url, secret } = body;
  const events = [...new Set(body.events)];
  const existing = await listWebhooks(auth.tenantId);
  if (existing.length >= MAX_WEBHOOKS_PER_TENANT) throw new ConflictError(`A tenant may register at most ${MAX_WEBHOOKS_PER_TENANT} webhooks`, 'LIMIT_EXCEEDED');
  const id = newId('whk');
  const now = new Date().toISOString();
  const webhook: StoredWebhook = {
    id,
    tenantId: auth.tenantId,
    url,
    events,
    secret: await encryptSecret(secret, id),
    status: 'active',
    createdBy: auth.user.id,
    creatorRole: auth.user.role,
    createdAt: now,
    updatedAt: now,
  };
  await putWebhook(webhook);
  invalidateSubscriptions(auth.tenantId);
  return present(webhook);
}

function visible(auth: AuthContext, webhook: StoredWebhook | undefined): webhook is StoredWebhook {
  return webhook !== undefined && webhook.tenantId === auth.tenantId && (auth.user.role === 'admin' || webhook.createdBy === auth.user.id);
}

async function ownWebhook(auth: AuthContext, id: string): Promise<StoredWebhook> {
  const webhook = /^whk_[A-Za-z0-9]{1,64}$/.test(id) ? await getWebhook(auth.tenantId, id) : undefined;
  if (!visible(auth, webhook)) throw new NotFoundError('Webhook not found');
  return webhook;
}

export async function listTenantWebhooks(auth: AuthContext): Promise<WebhookView[]> {
  const all = await listWebhooks(auth.tenantId);
  return all
    .filter((w) => visible(auth, w))
    .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
    .map(present);
}

export async function readWebhook(auth: AuthContext, id: string): Promise<WebhookView> {
  return present(await ownWebhook(auth, id));
}

/** PATCH: url, events, secret and status (re-enable a disabled webhook with status active). */
export async function changeWebhook(auth: AuthContext, id: string, body: WebhookChange): Promise<WebhookView> {
  const webhook = await ownWebhook(auth, id);
  await checkWebhookBody(body);
  const changes: Partial<StoredWebhook> = {};
  if (body.url !== undefined) changes.url = body.url;
  if (body.events !== undefined) changes.events = [...new Set(body.events)];
  if (body.secret !== undefined) changes.secret = await encryptSecret(body.secret, webhook.id);
  if (body.status !== undefined && body.status !== webhook.status) {
    changes.status = body.status;
    // Re-enabled: the failing period starts again from the next failure.
    if (body.status === 'active') Object.assign(changes, { failingSince: undefined, disabledAt: undefined });
    else changes.disabledAt = new Date().toISOString();
  }
  changes.updatedAt = new Date().toISOString();
  const updated = await updateWebhook(auth.tenantId, id, changes);
  if (!updated) throw new NotFoundError('Webhook not found');
  invalidateSubscriptions(auth.tenantId);
  return present(updated);
}

export async function removeWebhook(auth: AuthContext, id: string): Promise<void> {
  await ownWebhook(auth, id);
  await deleteWebhook(auth.tenantId, id);
  invalidateSubscriptions(auth.tenantId);
}

export async function webhookDeliveries(auth: AuthContext, id: string, limit: number, cursor?: string) {
  await ownWebhook(auth, id);
  const page = await listDeliveries(id, limit, cursor);
  return { deliveries: page.deliveries.map(presentDelivery), nextCursor: page.nextCursor };
}

export async function retryDelivery(auth: AuthContext, id: string, deliveryId: string) {
  const webhook = await ownWebhook(auth, id);
  const delivery = /^dlv_[0-9a-f]{32}$/.test(deliveryId) ? await getDelivery(id, deliveryId) : undefined;
  if (!delivery) throw new NotFoundError('Delivery not found');
  return presentDelivery(await deliverNow(webhook, delivery));
}

/** Sends a `webhook.test` event now, whatever the webhook subscribes to. */
export async function pingWebhook(auth: AuthContext, id: string) {
  const webhook = await ownWebhook(auth, id);
  const now = new Date().toISOString();
  const eventId = `evt_test_${randomBytes(12).toString('hex')}`;
  const payload = payloadOf({ id: eventId, type: TEST_EVENT, createdAt: now, data: { webhookId: webhook.id, message: 'This is a test delivery.' } });
  const delivery = pendingDelivery({ webhookId: webhook.id, tenantId: webhook.tenantId }, { id: eventId, type: TEST_EVENT, createdAt: now, payload }, null, Date.parse(now));
  await createDelivery(delivery);
  return presentDelivery(await deliverNow(webhook, delivery));
}

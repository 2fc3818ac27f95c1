/**
 * Webhook registrations of a tenant: validation, the target URL rule (ssrf.ts), the secret
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
export const MAX_URL_LENGTH = 2048;
export const SECRET_LENGTH = { min: 8, max: 512 };

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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function checkUrl(url: unknown, details: Record<string, string>): Promise<string | undefined> {
  if (typeof url !== 'string' || !url) {
    details.url = 'is required: an https:// URL';
    return undefined;
  }
  if (url.length > MAX_URL_LENGTH) {
    details.url = `must be at most ${MAX_URL_LENGTH} characters`;
    return undefined;
  }
  const problem = await targetUrlProblem(url, { allowInsecure: config().webhooks.allowInsecure, resolve: resolver });
  if (problem) details.url = problem;
  return problem ? undefined : url;
}

async function checkEvents(events: unknown, details: Record<string, string>): Promise<string[] | undefined> {
  if (!Array.isArray(events) || events.length === 0) {
    details.events = 'is required: a non-empty array of event names such as task.created';
    return undefined;
  }
  const known = knownEventTypes((await loadRegistry()).values());
  const unknown = events.filter((e) => typeof e !== 'string' || !known.has(e));
  if (unknown.length) {
    details.events = `unknown event ${unknown.map((e) => `'${String(e)}'`).join(', ')}; known: ${[...known].join(', ')}`;
    return undefined;
  }
  return [...new Set(events as string[])];
}

function checkSecret(secret: unknown, details: Record<string, string>): string | undefined {
  if (typeof secret !== 'string' || secret.length < SECRET_LENGTH.min || secret.length > SECRET_LENGTH.max) {
    details.secret = `is required: a string of ${SECRET_LENGTH.min} to ${SECRET_LENGTH.max} characters`;
    return undefined;
  }
  return secret;
}

function unknownFields(body: Record<string, unknown>, allowed: string[], details: Record<string, string>): void {
  for (const key of Object.keys(body)) if (!allowed.includes(key)) details[key] = 'is not a field of a webhook';
}

export async function createWebhook(auth: AuthContext, body: unknown): Promise<WebhookView> {
  if (!isObject(body)) throw new ValidationError({ body: 'must be a JSON object {url, events, secret}' });
  const details: Record<string, string> = {};
  unknownFields(body, ['url', 'events', 'secret'], details);
  const url = await checkUrl(body.url, details);
  const events = await checkEvents(body.events, details);
  const secret = checkSecret(body.secret, details);
  if (Object.keys(details).length || !url || !events || !secret) throw new ValidationError(details);
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
export async function changeWebhook(auth: AuthContext, id: string, body: unknown): Promise<WebhookView> {
  const webhook = await ownWebhook(auth, id);
  if (!isObject(body) || Object.keys(body).length === 0) throw new ValidationError({ body: 'must be a JSON object with url, events, secret or status' });
  const details: Record<string, string> = {};
  unknownFields(body, ['url', 'events', 'secret', 'status'], details);
  const changes: Partial<StoredWebhook> = {};
  if ('url' in body) {
    const url = await checkUrl(body.url, details);
    if (url) changes.url = url;
  }
  if ('events' in body) {
    const events = await checkEvents(body.events, details);
    if (events) changes.events = events;
  }
  if ('secret' in body) {
    const secret = checkSecret(body.secret, details);
    if (secret) changes.secret = await encryptSecret(secret, webhook.id);
  }
  if ('status' in body) {
    if (body.status !== 'active' && body.status !== 'disabled') details.status = "must be 'active' or 'disabled'";
    else if (body.status !== webhook.status) {
      changes.status = body.status;
      // Re-enabled: the failing period starts again from the next failure.
      if (body.status === 'active') Object.assign(changes, { failingSince: undefined, disabledAt: undefined });
      else changes.disabledAt = new Date().toISOString();
    }
  }
  if (Object.keys(details).length) throw new ValidationError(details);
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

/**
 * Which webhooks receive an event. A tenant's registrations are cached briefly per container
 * (the fan-out reads them for every change); a registration change in this container drops its
 * tenant's entry at once, another container's copy lives at most SUBSCRIPTION_CACHE_MS.
 */
import type { ChangeEvent } from './events.js';
import { listWebhooks, type StoredWebhook } from './store.js';
import type { LoadedEntity } from '../registry/index.js';

export const SUBSCRIPTION_CACHE_MS = 5_000;
const cache = new Map<string, { webhooks: Promise<StoredWebhook[]>; until: number }>();

export function invalidateSubscriptions(tenantId: string): void {
  cache.delete(tenantId);
}

export function tenantWebhooks(tenantId: string, now = Date.now()): Promise<StoredWebhook[]> {
  const hit = cache.get(tenantId);
  if (hit && hit.until > now) return hit.webhooks;
  const webhooks = listWebhooks(tenantId);
  cache.set(tenantId, { webhooks, until: now + SUBSCRIPTION_CACHE_MS });
  webhooks.catch(() => cache.delete(tenantId));
  return webhooks;
}

/**
 * The webhooks that get this event: active, subscribed to its type, and allowed to see the record
 * (row-level security: a webhook registered by a non-admin receives another user's records only
 * when the entity is shared or public).
 */
export function subscribers(event: ChangeEvent, webhooks: readonly StoredWebhook[], entity: Pick<LoadedEntity, 'access'> | undefined): StoredWebhook[] {
  return webhooks.filter((w) => {
    if (w.status !== 'active' || !w.events.includes(event.type) || w.tenantId !== event.tenantId) return false;
    if (w.creatorRole === 'admin') return true;
    if (entity && (entity.access.shared || entity.access.public)) return true;
    return event.ownerId === w.createdBy;
  });
}

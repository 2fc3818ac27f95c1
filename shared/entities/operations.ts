/**
 * The entities family's operations, keyed by route: resolve the slug (custom override first,
 * then the registry; an unregistered slug → 404 ENTITY_NOT_FOUND, a core word → 404 NOT_FOUND),
 * then run the service. Also the two callbacks the middleware stack asks before the operation:
 * which anonymous requests are public reads, and when the route's `{entity}:action` scope applies.
 */
import { EntityNotFoundError, NotFoundError } from '../errors.js';
import type { StackOptions } from '../http/stack.js';
import type { ApiRequest, Operation, Reply } from '../http/types.js';
import { windowSeconds } from '../registry/describe.js';
import { findEntity } from '../registry/index.js';
import { RESERVED_SLUGS } from '../registry/validate.js';
import type { LoadedEntity } from '../registry/types.js';
import { routeKey, type RouteRateLimit } from '../core-routes.js';
import { apiUrl } from '../http/urls.js';
import { API_INDEX_PATH, apiIndex } from './api-index.js';
import { bulkDelete, bulkUpdate } from './bulk.js';
import { findOverride, type OverridableOperation } from './overrides.js';
import { preconditionsOf } from './preconditions.js';
import { createChild, createRecordReply, deleteRecord, describe, listChildren, listRecords, readRecord, updateRecordReply } from './service.js';

export const ENTITY_PATHS = {
  collection: '/api/v1/{entity}',
  record: '/api/v1/{entity}/{id}',
  child: '/api/v1/{entity}/{id}/{child}',
} as const;

const READS = new Set<OverridableOperation>(['list', 'read', 'options', 'listChild']);

function operationOf(req: ApiRequest): OverridableOperation | undefined {
  const { method, path } = req.route;
  if (path === ENTITY_PATHS.collection) return ({ GET: 'list', POST: 'create', OPTIONS: 'options' } as const)[method as 'GET'];
  if (path === ENTITY_PATHS.record) return ({ GET: 'read', PATCH: 'update', DELETE: 'delete' } as const)[method as 'GET'];
  if (path === ENTITY_PATHS.child) return ({ GET: 'listChild', POST: 'createChild' } as const)[method as 'GET'];
  return undefined;
}

/** Is this anonymous request allowed through? Public entities' reads, public overrides, and unknown slugs (→ 404). */
export function isPublicRead(req: ApiRequest): boolean {
  // The index answers anyone: anonymous callers see the public entities.
  if (req.route.path === API_INDEX_PATH) return true;
  const operation = operationOf(req);
  if (!operation || !READS.has(operation)) return false;
  const slug = req.params.entity ?? '';
  const override = findOverride(slug, operation);
  if (override) return override.public === true;
  const entity = findEntity(slug);
  if (!entity) return true;
  if (!entity.access.public) return false;
  if (operation === 'listChild') {
    const relation = entity.relations[req.params.child ?? ''] ?? Object.values(entity.relations).find((r) => r.entity === req.params.child);
    const target = relation && findEntity(relation.entity);
    return target?.access.public ?? true;
  }
  return true;
}

/** The route scope applies to registered entities and overrides; not to unknown slugs (→ 404) nor to public reads. */
export function scopeApplies(req: ApiRequest): boolean {
  const operation = operationOf(req);
  const slug = req.params.entity ?? '';
  if (operation && findOverride(slug, operation)) return true;
  const entity = findEntity(slug);
  if (!entity) return false;
  if (entity.access.public && (operation === 'list' || operation === 'read' || operation === 'options')) return false;
  return true;
}

/** An entity's own `rateLimit`, counted per caller beside the general limit. */
export function entityRateLimit(req: ApiRequest): RouteRateLimit | undefined {
  const entity = findEntity(req.params.entity ?? '');
  if (!entity?.rateLimit) return undefined;
  return { name: `entity:${entity.slug}`, limit: entity.rateLimit.limit, windowSeconds: windowSeconds(entity.rateLimit.window) };
}

export const entityStackOptions: StackOptions = { isPublicRead, scopeApplies, rateLimitFor: entityRateLimit };

function resolve(req: ApiRequest, operation: OverridableOperation, run: (entity: LoadedEntity) => Promise<Reply> | Reply): Promise<Reply> {
  const slug = req.params.entity ?? '';
  const override = findOverride(slug, operation);
  const entity = findEntity(slug);
  if (override) return override.handler(req, { entity });
  if (!entity) {
    if (RESERVED_SLUGS.has(slug)) return Promise.reject(new NotFoundError(`No route for ${req.method} ${req.path}`));
    return Promise.reject(new EntityNotFoundError(slug));
  }
  return Promise.resolve().then(() => run(entity));
}

/** A 201 names the record it created (RFC 9110 Location), where the client reaches the API. */
export function withLocation(req: Pick<ApiRequest, 'basePath' | 'origin'>, slug: string, reply: Reply): Reply {
  const id = (reply.data as { id?: unknown } | undefined)?.id;
  if (reply.status !== 201 || typeof id !== 'string') return reply;
  return { ...reply, headers: { ...reply.headers, Location: apiUrl(req, `/api/v1/${slug}/${encodeURIComponent(id)}`) } };
}

function replaceMetadata(req: ApiRequest): boolean {
  return req.query.replaceMetadata === 'true';
}

export const entityOperations: Record<string, Operation> = {
  [routeKey('GET', API_INDEX_PATH)]: async (req) => apiIndex(req),
  [routeKey('GET', ENTITY_PATHS.collection)]: (req) => resolve(req, 'list', (e) => listRecords(e, req)),
  [routeKey('POST', ENTITY_PATHS.collection)]: (req) => resolve(req, 'create', async (e) => withLocation(req, e.slug, await createRecordReply(e, req.auth, req.body ?? {}))),
  [routeKey('OPTIONS', ENTITY_PATHS.collection)]: (req) => resolve(req, 'options', (e) => describe(e, req.auth)),
  // Bulk update / delete (shared/entities/bulk.ts): each item through updateRecord / deleteRecord.
  [routeKey('PATCH', ENTITY_PATHS.collection)]: (req) => bulkUpdate(req),
  [routeKey('DELETE', ENTITY_PATHS.collection)]: (req) => bulkDelete(req),
  [routeKey('GET', ENTITY_PATHS.record)]: (req) => resolve(req, 'read', (e) => readRecord(e, req.params.id, req)),
  [routeKey('PATCH', ENTITY_PATHS.record)]: (req) =>
    resolve(req, 'update', (e) =>
      updateRecordReply(e, req.params.id, req.auth, req.body ?? {}, { replaceMetadata: replaceMetadata(req), preconditions: preconditionsOf(req.headers) }),
    ),
  [routeKey('DELETE', ENTITY_PATHS.record)]: (req) => resolve(req, 'delete', (e) => deleteRecord(e, req.params.id, req.auth, preconditionsOf(req.headers))),
  [routeKey('GET', ENTITY_PATHS.child)]: (req) => resolve(req, 'listChild', (e) => listChildren(e, req.params.id, req.params.child, req)),
  [routeKey('POST', ENTITY_PATHS.child)]: (req) => resolve(req, 'createChild', (e) => createChild(e, req.params.id, req.params.child, req.auth, req.body ?? {})),
};

/**
 * The entities family's operations, by the names of its route declarations: resolve the slug (custom override first,
 * then the registry; an unregistered slug → 404 ENTITY_NOT_FOUND, a core word → 404 NOT_FOUND),
 * parse the request once (its query string into a typed list or read query), run the service (shared/entities/), and build the reply and its headers
 * (ETag, Location, Link, X-Total-Count). Also the two callbacks the middleware stack asks before
 * the operation: which anonymous requests are public reads, and when the route's
 * `{entity}:action` scope applies.
 */
import type { RouteRateLimit } from '../../core-routes.js';
import {
  aggregateRecords,
  bulkDelete,
  bulkUpdate,
  listDeleted,
  listRevisions,
  parseRevisionNumber,
  parseRevisionsQuery,
  readRecordAtRevision,
  restoreRecord,
  undoOperation,
  childEntity,
  createChild,
  createRecordWithEtag,
  deleteRecord,
  listChildren,
  listRecords,
  type ListResult,
  parseAggregateQuery,
  parseListQueryString,
  parseReadQueryString,
  preconditionsOf,
  readRecord,
  type RecordWithEtag,
  updateRecordWithEtag,
} from '../../entities/index.js';
import { EntityNotFoundError, NotFoundError } from '../../errors.js';
import { describeEntity, findEntity, RESERVED_SLUGS, windowSeconds, type LoadedEntity } from '../../registry/index.js';
import type { Pagination } from '../../pagination.js';
import { apiPath, apiUrl } from '../../urls.js';
import type { StackOptions } from '../stack.js';
import type { ApiRequest, FamilyOperations, Reply } from '../types.js';
import { API_INDEX_PATH, apiIndex } from './api-index.js';
import { findOverride, type OverridableOperation } from './entity-overrides.js';

export const ENTITY_PATHS = {
  collection: '/api/v1/{entity}',
  aggregate: '/api/v1/{entity}/aggregate',
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
  // An aggregate answers whoever could list: a public entity's is public.
  if (req.route.path === ENTITY_PATHS.aggregate) return findEntity(req.params.entity ?? '')?.access.public ?? true;
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
  if (req.route.path === ENTITY_PATHS.aggregate) {
    const entity = findEntity(slug);
    return entity !== undefined && !entity.access.public;
  }
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

/** The entity a bulk request or an aggregate names (no override applies to them). */
function bulkEntity(req: ApiRequest): LoadedEntity {
  const slug = req.params.entity ?? '';
  const entity = findEntity(slug);
  if (!entity) {
    if (RESERVED_SLUGS.has(slug)) throw new NotFoundError(`No route for ${req.method} ${req.path}`);
    throw new EntityNotFoundError(slug);
  }
  return entity;
}

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

/** X-Total-Count, X-Page, X-Per-Page and Link (RFC 8288) next/prev: the same query with another page. */
export function listHeaders(req: Pick<ApiRequest, 'path' | 'basePath' | 'multiQuery' | 'query'>, pagination: Pagination): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Total-Count': String(pagination.total),
    'X-Page': String(pagination.page),
    'X-Per-Page': String(pagination.limit),
  };
  // next continues from the page's position (nextCursor); prev is an offset page.
  const target = (at: { page: number } | { cursor: string }): string => {
    const params = new URLSearchParams();
    const multi = req.multiQuery ?? Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, [v]]));
    for (const [key, values] of Object.entries(multi)) {
      if (key === 'page' || key === 'cursor') continue;
      for (const v of values) params.append(key, v);
    }
    if ('cursor' in at) params.set('cursor', at.cursor);
    else params.set('page', String(at.page));
    return apiPath(req, `${req.path}?${params.toString()}`);
  };
  const links: string[] = [];
  if (pagination.hasNext && pagination.nextCursor) links.push(`<${target({ cursor: pagination.nextCursor })}>; rel="next"`);
  if (pagination.hasPrev) links.push(`<${target({ page: Math.min(pagination.page - 1, Math.max(pagination.totalPages, 1)) })}>; rel="prev"`);
  if (links.length) headers.Link = links.join(', ');
  return headers;
}

function listReply(req: ApiRequest, { data, pagination }: ListResult): Reply {
  return { data, pagination, headers: listHeaders(req, pagination) };
}

function recordReply({ data, etag }: RecordWithEtag, status?: number): Reply {
  return { ...(status ? { status } : {}), data, headers: { ETag: etag } };
}

function replaceMetadata(req: ApiRequest): boolean {
  return req.query.replaceMetadata === 'true';
}

export const entityOperations: FamilyOperations<'entities'> = {
  getApiIndex: async (req) => apiIndex(req),
  // The query string is parsed here, once, against the entity it lists; the service takes the result.
  list: (req) => resolve(req, 'list', async (e) => listReply(req, await listRecords(e, req.auth, parseListQueryString(e, req.query)))),
  // No override applies: an aggregate reads what LIST would (shared/entities/aggregate.ts).
  aggregate: async (req) => {
    const entity = bulkEntity(req);
    const { data, meta } = await aggregateRecords(entity, req.auth, parseAggregateQuery(entity, req.query));
    return { data, meta };
  },
  create: (req) =>
    resolve(req, 'create', async (e) => withLocation(req, e.slug, recordReply(await createRecordWithEtag(e, req.auth, req.body ?? {}), 201))),
  describe: (req) => resolve(req, 'options', (e) => ({ data: describeEntity(e, req.auth) })),
  // Bulk update / delete (shared/entities/bulk.ts): each item through updateRecord / deleteRecord.
  bulkUpdate: async (req) => ({
    status: 200,
    data: await bulkUpdate(bulkEntity(req), req.auth, req.body, { replaceMetadata: replaceMetadata(req) }),
  }),
  bulkDelete: async (req) => ({ status: 200, data: await bulkDelete(bulkEntity(req), req.auth, req.body) }),
  read: (req) => resolve(req, 'read', async (e) => recordReply(await readRecord(e, req.params.id, req.auth, parseReadQueryString(e, req.query)))),
  update: (req) =>
    resolve(req, 'update', async (e) =>
      recordReply(await updateRecordWithEtag(e, req.params.id, req.auth, req.body ?? {}, { replaceMetadata: replaceMetadata(req), preconditions: preconditionsOf(req.headers) })),
    ),
  delete: (req) =>
    resolve(req, 'delete', async (e) => {
      const deleted = await deleteRecord(e, req.params.id, req.auth, preconditionsOf(req.headers));
      return deleted ? recordReply(deleted) : { message: `${e.name} ${req.params.id} deleted` };
    }),
  listChildren: (req) =>
    resolve(req, 'listChild', async (e) => {
      const query = parseListQueryString(childEntity(e, req.params.child), req.query);
      return listReply(req, await listChildren(e, req.params.id, req.params.child, req.auth, query));
    }),
  listRevisions: async (req) => ({ ...(await listRevisions(bulkEntity(req), req.params.id, req.auth, parseRevisionsQuery(req.query))) }),
  readRevision: async (req) => ({ data: await readRecordAtRevision(bulkEntity(req), req.params.id, req.auth, parseRevisionNumber(req.params.revision)) }),
  restoreRecord: async (req) => recordReply(await restoreRecord(bulkEntity(req), req.params.id, req.auth, req.body, preconditionsOf(req.headers)), 200),
  listDeleted: async (req) => ({ ...(await listDeleted(bulkEntity(req), req.auth, parseRevisionsQuery(req.query))) }),
  undoOperation: async (req) => ({ status: 200, data: await undoOperation(req.params.operationId, req.auth) }),
  createChild: (req) =>
    resolve(req, 'createChild', async (e) => ({ status: 201, data: await createChild(e, req.params.id, req.params.child, req.auth, req.body ?? {}) })),
};

/**
 * GET /api/v1: where a newcomer starts. The entities the caller may use (public ones for an
 * anonymous caller), each with its path, the operations open to the caller and links to its
 * OPTIONS description and its section of /api/docs; then the API's other doors.
 */
import { config } from '../../config.js';
import { allEntities, allowed, type LoadedEntity, type OperationName } from '../../registry/index.js';
import { apiPath } from '../../urls.js';
import type { ApiRequest, Reply } from '../types.js';

export const API_INDEX_PATH = '/api/v1';

export interface IndexEntity {
  name: string;
  slug: string;
  path: string;
  operations: OperationName[];
  public: boolean;
  links: { options: string; docs: string };
}

/** The operations of `entity` open to the caller (reads of a public entity to anyone). */
export function operationsFor(entity: LoadedEntity, auth: ApiRequest['auth']): OperationName[] {
  const ops = entity.operations;
  const canRead = entity.access.public || allowed(entity, 'read', auth);
  const open: OperationName[] = [];
  if (ops.list && canRead) open.push('list');
  if (ops.read && canRead) open.push('read');
  if (ops.create && allowed(entity, 'create', auth)) open.push('create');
  if (ops.update && allowed(entity, 'update', auth)) open.push('update');
  if (ops.delete && allowed(entity, 'delete', auth)) open.push('delete');
  return open;
}

export function apiIndex(req: Pick<ApiRequest, 'auth' | 'basePath'>): Reply {
  const at = (path: string) => apiPath(req, path);
  const entities: IndexEntity[] = [];
  for (const entity of [...allEntities()].sort((a, b) => a.slug.localeCompare(b.slug))) {
    const operations = operationsFor(entity, req.auth);
    if (!operations.length) continue;
    entities.push({
      name: entity.name,
      slug: entity.slug,
      path: at(`/api/v1/${entity.slug}`),
      operations,
      public: entity.access.public,
      links: { options: at(`/api/v1/${entity.slug}`), docs: `${at('/api/docs')}#/${entity.slug}` },
    });
  }
  const caller = req.auth ? { type: req.auth.type, email: req.auth.user.email, role: req.auth.user.role, tenantId: req.auth.tenantId } : null;
  return {
    data: {
      name: 'Entity Record API',
      version: 'v1',
      release: config().version,
      caller,
      entities,
      links: {
        docs: at('/api/docs'),
        openapi: at('/api/v1/openapi.json'),
        health: at('/api/health'),
        login: at('/api/v1/auth/login'),
        apiKeys: at('/api/v1/api-keys'),
        graphql: at('/api/v1/graphql'),
        batch: at('/api/v1/batch'),
        webhooks: at('/api/v1/webhooks'),
      },
    },
    message: caller
      ? 'Each entity: GET/POST its path, GET/PATCH/DELETE path/{id}; OPTIONS on its path describes its fields.'
      : 'Only public entities are listed: sign in (POST /api/v1/auth/login) or send an API key to see every entity you may use.',
  };
}

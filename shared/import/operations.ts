/**
 * The import family's operations: POST /api/v1/import/tasks (static, wins over the template) and
 * POST /api/v1/import/{entity}. Scope `<entity>:write` (the route's); an unregistered entity
 * answers 404 ENTITY_NOT_FOUND (its scope is not asked for first).
 */
import { EntityNotFoundError } from '../errors.js';
import type { AuthorizeOptions } from '../http/authorize.js';
import type { Operation } from '../http/types.js';
import { findEntity } from '../registry/index.js';
import { routeKey } from '../core-routes.js';
import { importRecords, importTasks } from './service.js';

export const IMPORT_PATHS = {
  tasks: '/api/v1/import/tasks',
  entity: '/api/v1/import/{entity}',
} as const;

export const importAuthorizeOptions: AuthorizeOptions = {
  scopeApplies: (req) => req.route.path !== IMPORT_PATHS.entity || findEntity(req.params.entity ?? '') !== undefined,
};

export const importOperations: Record<string, Operation> = {
  [routeKey('POST', IMPORT_PATHS.tasks)]: async (req) => ({ status: 201, data: await importTasks(req) }),
  [routeKey('POST', IMPORT_PATHS.entity)]: async (req) => {
    const entity = findEntity(req.params.entity ?? '');
    if (!entity) throw new EntityNotFoundError(req.params.entity ?? '');
    return { status: 201, data: await importRecords(entity, req) };
  },
};

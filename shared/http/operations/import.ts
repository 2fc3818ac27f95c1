/**
 * The import family's operations: POST /api/v1/import/tasks (static, wins over the template) and
 * POST /api/v1/import/{entity}. Scope `<entity>:write` (the route's); an unregistered entity
 * answers 404 ENTITY_NOT_FOUND (its scope is not asked for first).
 */
import { EntityNotFoundError, ValidationError } from '../../errors.js';
import { CSV_TYPE, csvItems, type IdSeed, type ImportInput, importRecords, importTasks } from '../../import/index.js';
import { findEntity, type LoadedEntity } from '../../registry/index.js';
import type { AuthorizeOptions } from '../authorize.js';
import { idempotencyKeyOf, idempotencyScope } from '../idempotency.js';
import type { ApiRequest, FamilyOperations } from '../types.js';

export const IMPORT_PATHS = {
  tasks: '/api/v1/import/tasks',
  entity: '/api/v1/import/{entity}',
} as const;

export const importAuthorizeOptions: AuthorizeOptions = {
  scopeApplies: (req) => req.route.path !== IMPORT_PATHS.entity || findEntity(req.params.entity ?? '') !== undefined,
};

/** Query flags that stand for the JSON body's options when the body is CSV. */
function flags(req: ApiRequest, names: readonly string[]): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const name of names) {
    const value = req.query[name];
    if (value === undefined) continue;
    if (value !== 'true' && value !== 'false') throw new ValidationError({ [name]: 'must be true or false' });
    out[name] = value === 'true';
  }
  return out;
}

/**
 * A text/csv body becomes the JSON body it stands for: its rows are the items (or tasks), and
 * the options come from the query string (?skipInvalid=true&returnFailures=true; for tasks
 * ?assignUsers=true&notify=true). The import then runs exactly as for JSON.
 */
function csvAsJson(req: ApiRequest, entity: LoadedEntity, tasks: boolean): void {
  if (!CSV_TYPE.test(req.headers['content-type'] ?? '')) return;
  const items = csvItems(entity, req.rawBody?.toString('utf8') ?? '');
  if (tasks) req.body = { tasks: items, ...flags(req, ['assignUsers', 'notify']) };
  else req.body = { items, options: flags(req, ['skipInvalid', 'returnFailures']) };
}

/** The seed of record ids an Idempotency-Key gives: a retried import writes the same ids. */
function seedOf(req: ApiRequest): IdSeed | undefined {
  const key = idempotencyKeyOf(req);
  return key === undefined ? undefined : { scope: idempotencyScope(req.auth, req.ip), idempotencyKey: key };
}

function inputOf(req: ApiRequest): ImportInput {
  return { caller: req.auth, body: req.body, seed: seedOf(req) };
}

export const importOperations: FamilyOperations<'import'> = {
  importTasks: async (req) => {
    const entity = findEntity('tasks');
    if (entity) csvAsJson(req, entity, true);
    return { status: 201, data: await importTasks(inputOf(req)) };
  },
  importRecords: async (req) => {
    const entity = findEntity(req.params.entity ?? '');
    if (!entity) throw new EntityNotFoundError(req.params.entity ?? '');
    csvAsJson(req, entity, false);
    return { status: 201, data: await importRecords(entity, inputOf(req)) };
  },
};

/**
 * The import family's routes: the static tasks variant wins over the template (static beats
 * {param}). The body (JSON or CSV) is checked by the import services, item by item.
 */
import type { RouteDocs } from '../route-types.js';
import { BODY, OBJECT, V1, familyRoutes } from './declare.js';

const IMPORT = [...BODY, 'ENTITY_NOT_FOUND', 'METHOD_NOT_ALLOWED', 'UNIQUE_VIOLATION', 'IMPORT_INCOMPLETE'] as const;

export const importRoutes = /* @__PURE__ */ familyRoutes('import', [
  {
    method: 'POST',
    path: `${V1}/import/tasks`,
    operation: 'importTasks',
    auth: 'required',
    scope: 'tasks:write',
    csvBody: true,
    errors: [...IMPORT],
    summary: 'Import tasks',
  },
  {
    method: 'POST',
    path: `${V1}/import/{entity}`,
    operation: 'importRecords',
    auth: 'required',
    scope: '{entity}:write',
    csvBody: true,
    errors: [...IMPORT],
    summary: 'Import {entity}',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function importDocs(): RouteDocs<(typeof importRoutes)[number]> {
  return {
    importTasks: ({ json, envelopeOf }) => ({
      tag: 'Import',
      description:
        "`assignUsers` resolves each item's `assigneeEmail` to a user of the tenant; `notify` emits task.created for each imported task. Also takes `Content-Type: text/csv` (header row = field names, one task a row) with `?assignUsers=true&notify=true` in the query string.",
      requestBody: {
        schema: {
          type: 'object',
          required: ['tasks'],
          properties: { tasks: { type: 'array', minItems: 1, maxItems: 100, items: OBJECT }, assignUsers: { type: 'boolean', default: false }, notify: { type: 'boolean', default: false } },
        },
        example: { tasks: [{ title: 'First' }, { title: 'Second', assigneeEmail: 'ada@example.com' }], assignUsers: true },
      },
      responses: {
        201: json(
          envelopeOf({
            type: 'object',
            required: ['imported', 'failed', 'tasks', 'errors'],
            properties: { imported: { type: 'integer' }, failed: { type: 'integer' }, tasks: { type: 'array', items: OBJECT }, errors: { type: 'array', items: OBJECT } },
          }),
          'What was imported and what failed.',
        ),
      },
      errors: [400, 422],
    }),
    importRecords: ({ json, envelopeOf, ref, entity }) => ({
      tag: 'Import',
      operationId: `import${entity ? entity.record : ''}Records`,
      description:
        'With skipInvalid an invalid item is reported and the rest imported; without, the first invalid item aborts (422 naming its index; 409 UNIQUE_VIOLATION when its only problem is a unique value another record or an earlier item holds) and nothing is written. Also takes `Content-Type: text/csv` (header row = field names, one item a row; an empty cell leaves the field out) with `?skipInvalid=true&returnFailures=true` in the query string.',
      requestBody: {
        schema: {
          type: 'object',
          required: ['items'],
          properties: {
            items: { type: 'array', minItems: 1, maxItems: 100, items: entity ? ref(entity.create) : OBJECT },
            options: { type: 'object', properties: { skipInvalid: { type: 'boolean', default: false }, returnFailures: { type: 'boolean', default: false } } },
          },
        },
        ...(entity ? { example: { items: [entity.createExample], options: { skipInvalid: true, returnFailures: true } } } : {}),
      },
      responses: {
        201: json(
          envelopeOf({
            type: 'object',
            required: ['created', 'failed', 'items'],
            properties: {
              created: { type: 'integer' },
              failed: { type: 'integer' },
              items: { type: 'array', items: entity ? ref(entity.record) : OBJECT },
              failures: { type: 'array', items: ref('ImportFailure') },
            },
          }),
          'What was created and what failed.',
        ),
      },
      errors: [400, 409, 422],
    }),
  };
}

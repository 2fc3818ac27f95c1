/** The migrations family's route: each entity's layout and migration state (platform operator only). */
import type { RouteDocs } from '../route-types.js';
import { familyRoutes, V1 } from './declare.js';

export const migrationsRoutes = /* @__PURE__ */ familyRoutes('migrations', [
  {
    method: 'GET',
    path: `${V1}/migrations`,
    operation: 'listMigrations',
    auth: 'session',
    errors: ['FORBIDDEN'],
    summary: "Each entity's layout and migration state (platform operator)",
    response: 'MigrationState',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function migrationsDocs(): RouteDocs<(typeof migrationsRoutes)[number]> {
  return {
    listMigrations: ({ json, envelopeOf, ref }) => ({
      tag: 'Tenants',
      description:
        "Only the bootstrap admin's session may. Per entity: the layout (hash, previous hash, content), state (pending, running, done, failed), records processed of total, start and end, the changes in words, which indexes are complete, and the report (duplicates of a value made unique, records a tightened rule refuses; the first 100 and their count). See docs/changing-entities.md.",
      responses: { 200: json(envelopeOf({ type: 'array', items: ref('MigrationState') }), 'The migration state of every entity.') },
      errors: [403],
    }),
  };
}

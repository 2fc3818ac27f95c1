/**
 * Every family's route declarations (one file a family): a route's method, path, auth, scope,
 * body, query, response, error codes and the name of the operation that serves it, each written
 * once, and beside them, by operation name, each route's API description. shared/core-routes.ts puts them in route-table order; each
 * family's operations map is checked against its own by the compiler (FamilyOperations,
 * shared/http/types.ts).
 */
import { authDocs, authRoutes } from './auth.js';
import { batchDocs, batchRoutes } from './batch.js';
import { dashboardDocs, dashboardRoutes } from './dashboard.js';
import { docsDocs, docsRoutes } from './docs.js';
import { entitiesDocs, entitiesRoutes } from './entities.js';
import { graphqlDocs, graphqlRoutes } from './graphql.js';
import { healthDocs, healthRoutes } from './health.js';
import { importDocs, importRoutes } from './import.js';
import { keysDocs, keysRoutes } from './keys.js';
import { migrationsDocs, migrationsRoutes } from './migrations.js';
import { streamDocs, streamRoutes } from './stream.js';
import { uploadDocs, uploadRoutes } from './upload.js';
import { webhooksDocs, webhooksRoutes } from './webhooks.js';
import type { RouteDocs } from '../route-types.js';

export { authRoutes, batchRoutes, dashboardRoutes, docsRoutes, entitiesRoutes, graphqlRoutes, healthRoutes, importRoutes, keysRoutes, migrationsRoutes, streamRoutes, uploadRoutes, webhooksRoutes };
export { uploadBodySchemas } from './upload.js';
export { webhookBodySchemas } from './webhooks.js';

/** Each core family's declarations, by family (the plugins' come from their own files). */
export interface CoreDeclarations {
  health: typeof healthRoutes;
  auth: typeof authRoutes;
  migrations: typeof migrationsRoutes;
  keys: typeof keysRoutes;
  batch: typeof batchRoutes;
  import: typeof importRoutes;
  graphql: typeof graphqlRoutes;
  upload: typeof uploadRoutes;
  docs: typeof docsRoutes;
  dashboard: typeof dashboardRoutes;
  stream: typeof streamRoutes;
  webhooks: typeof webhooksRoutes;
  entities: typeof entitiesRoutes;
}

/**
 * The API description of every core route, by family and operation: only the API description
 * (shared/openapi/) calls it, so no other family's cold start builds it, nor carries its code.
 */
export function coreRouteDocs(): { readonly [F in keyof CoreDeclarations]: RouteDocs<CoreDeclarations[F][number]> } {
  return {
    health: healthDocs(),
    auth: authDocs(),
    migrations: migrationsDocs(),
    keys: keysDocs(),
    batch: batchDocs(),
    import: importDocs(),
    graphql: graphqlDocs(),
    upload: uploadDocs(),
    docs: docsDocs(),
    dashboard: dashboardDocs(),
    stream: streamDocs(),
    webhooks: webhooksDocs(),
    entities: entitiesDocs(),
  };
}

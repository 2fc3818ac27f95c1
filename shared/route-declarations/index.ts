/**
 * Every family's route declarations (one file a family): a route's method, path, auth, scope,
 * body, query, response, error codes, the name of the operation that serves it and its API
 * description, each written once. shared/core-routes.ts puts them in route-table order; each
 * family's operations map is checked against its own by the compiler (FamilyOperations,
 * shared/http/types.ts).
 */
import { authRoutes } from './auth.js';
import { batchRoutes } from './batch.js';
import { dashboardRoutes } from './dashboard.js';
import { docsRoutes } from './docs.js';
import { entitiesRoutes } from './entities.js';
import { graphqlRoutes } from './graphql.js';
import { healthRoutes } from './health.js';
import { importRoutes } from './import.js';
import { keysRoutes } from './keys.js';
import { migrationsRoutes } from './migrations.js';
import { streamRoutes } from './stream.js';
import { uploadRoutes } from './upload.js';
import { webhooksRoutes } from './webhooks.js';

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

/**
 * The families a batch sub-request can be dispatched to, each loaded lazily with a literal
 * dynamic import: esbuild then bundles the family's handler module into the batch Lambda (it
 * is initialised on first use). A template string (`../../functions/${family}/handler.js`) does
 * NOT work: esbuild turns it into a glob over `.js` files, which matches none of our `.ts`
 * sources, and the bundle fails at run time with "Module not found in bundle".
 *
 * Not dispatchable: `batch` itself (a batch inside a batch is refused; importing it here would
 * also make a cycle) and `health` (not under /api/v1). A family added to shared/routes.ts must be
 * added here or to NOT_BATCHABLE (test/functions/batch/families.test.ts checks it).
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Family } from '../../shared/routes.js';
import type { ApiEvent, ApiLambdaContext } from '../../shared/http/types.js';

export type FamilyHandler = (event: ApiEvent, context: ApiLambdaContext) => Promise<APIGatewayProxyResult>;

type Loader = () => Promise<{ handler: unknown }>;

const loaders: Partial<Record<Family, Loader>> = {
  auth: () => import('../auth/handler.js'),
  keys: () => import('../keys/handler.js'),
  entities: () => import('../entities/handler.js'),
  import: () => import('../import/handler.js'),
  graphql: () => import('../graphql/handler.js'),
  plugins: () => import('../plugins/handler.js'),
};

/** Families a batch never dispatches to, and why. */
export const NOT_BATCHABLE: Readonly<Partial<Record<Family, string>>> = {
  batch: 'a batch cannot contain another batch',
  health: 'the health check is not under /api/v1',
  upload: 'uploads carry multipart bodies or move objects in S3; they are sent on their own',
  docs: 'the API description and its page are static documents',
  dashboard: 'the dashboard is a page and its static files',
  stream: 'a streamed response (text/event-stream) cannot be a sub-response',
  webhooks: 'deliveries and inbound receivers act outside the request (a replay or ping waits for a receiver)',
  migrations: 'the migration status of the platform operator is read on its own (a session only)',
};

const loaded = new Map<Family, Promise<FamilyHandler>>();

export function isBatchable(family: Family): boolean {
  return loaders[family] !== undefined;
}

export function batchableFamilies(): Family[] {
  return Object.keys(loaders) as Family[];
}

/** The family's Lambda handler (the very module its own Lambda runs), loaded once. */
export function familyHandler(family: Family): Promise<FamilyHandler> {
  const load = loaders[family];
  if (!load) throw new Error(`family '${family}' cannot be dispatched in a batch`);
  let handler = loaded.get(family);
  if (!handler) {
    handler = load().then((m) => m.handler as FamilyHandler);
    // A failed load (a broken module) is retried by the next batch rather than cached.
    handler.catch(() => loaded.delete(family));
    loaded.set(family, handler);
  }
  return handler;
}

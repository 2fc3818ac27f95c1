/**
 * The families a batch sub-request can be dispatched to, each loaded lazily with a literal
 * dynamic import: esbuild then bundles the family's handler module into the batch Lambda (it
 * is initialised on first use). A template string (`../../functions/${family}/handler.js`) does
 * NOT work: esbuild turns it into a glob over `.js` files, which matches none of our `.ts`
 * sources, and the bundle fails at run time with "Module not found in bundle".
 *
 * Whether a family is dispatchable is its declaration's `batch` (FAMILIES, shared/core-routes.ts):
 * `true` needs a loader here (a literal import, for esbuild), a reason keeps it out (`batch` itself:
 * a batch inside a batch is refused; importing it here would also make a cycle).
 * test/functions/batch/families.test.ts checks the two agree.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { FAMILIES, type Family } from '../../shared/core-routes.js';
import type { ApiEvent, ApiLambdaContext } from '../../shared/http/types.js';

/**
 * The context a sub-request runs with: a Lambda context without getRemainingTimeInMillis, so that
 * the family's stack sets no deadline of its own (the outer invocation's bounds the whole batch).
 */
export type SubRequestContext = Omit<ApiLambdaContext, 'getRemainingTimeInMillis'>;

export type FamilyHandler = (event: ApiEvent, context: SubRequestContext) => Promise<APIGatewayProxyResult>;

type Loader = () => Promise<{ handler: unknown }>;

const loaders: Partial<Record<Family, Loader>> = {
  auth: () => import('../auth/handler.js'),
  keys: () => import('../keys/handler.js'),
  entities: () => import('../entities/handler.js'),
  import: () => import('../import/handler.js'),
  graphql: () => import('../graphql/handler.js'),
  plugins: () => import('../plugins/handler.js'),
};

/** Families a batch never dispatches to, and why (their declarations in shared/core-routes.ts say so). */
export const NOT_BATCHABLE: Readonly<Partial<Record<Family, string>>> = Object.fromEntries(
  Object.entries(FAMILIES).flatMap(([family, d]) => (d.batch === true ? [] : [[family, d.batch]])),
);

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

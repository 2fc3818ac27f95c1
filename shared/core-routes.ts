/**
 * The API's own routes (all but the plugins'), in route-table order, from each family's
 * declarations (shared/route-declarations/), each family's grants, and the lookup a middleware
 * stack resolves a request's route with. A function whose routes are all core (every family but
 * plugins) resolves its requests here, and its cold start never loads the plugin declarations that
 * shared/routes.ts adds to these to make THE route table.
 *
 * Path templates use API Gateway's {param} syntax. Static segments win over parameters, so the
 * core paths (users, api-keys, keys, auth, ...) resolve before {entity}, as SPEC.md orders them.
 */
import {
  authRoutes,
  batchRoutes,
  dashboardRoutes,
  docsRoutes,
  entitiesRoutes,
  graphqlRoutes,
  healthRoutes,
  importRoutes,
  keysRoutes,
  migrationsRoutes,
  streamRoutes,
  uploadRoutes,
  webhooksRoutes,
} from './route-declarations/index.js';
import { routeLookup, type RouteLookup } from './route-lookup.js';
import type { Family, Route } from './route-types.js';
import type { TableDefinition } from './tables.js';

export type { AuthMode, Family, HttpMethod, JsonSchema, QueryParameter, Route, RouteDeclaration, RouteRateLimit } from './route-types.js';

/**
 * How a family may touch a table (infra/aws/permissions.ts grants exactly this):
 *   describe   – dynamodb:DescribeTable only (a liveness check)
 *   read       – GetItem, BatchGetItem, Query, Scan, ConditionCheckItem, DescribeTable, stream reads, indexes included
 *   readUpdate – read plus dynamodb:UpdateItem: changes existing items, never creates or deletes
 *   readWrite  – read plus PutItem, UpdateItem, DeleteItem, BatchWriteItem
 */
export type TableAccess = 'describe' | 'read' | 'readUpdate' | 'readWrite';
export type TableGrants = Partial<Record<TableDefinition['id'], TableAccess>>;

export interface FamilyDeclaration {
  /** The tables its function may touch, and how (least privilege). */
  tables: TableGrants;
  /** A batch sub-request may be dispatched to it (functions/batch/families.ts loads it), or why not. */
  batch: true | string;
  /** Its requests are not counted against any rate limit (static documents, the health check). */
  uncounted?: true;
}

/** Whether a request of `family` counts against the caller's rate limits. */
export function isCountedFamily(family: string): boolean {
  return !(Object.hasOwn(FAMILIES, family) && FAMILIES[family as Family].uncounted);
}

/**
 * Every family that authenticates reads the identity table and updates it, best effort (a session's
 * sliding expiry, an API key's lastUsedAt), and counts rate limits and idempotency records.
 */
const AUTHENTICATES: TableGrants = { identity: 'readUpdate', limits: 'readWrite' };
/** Families that read and write records: the record, its counters and its change event. */
const RECORD_WRITER: TableGrants = { records: 'readWrite', events: 'readWrite', history: 'readWrite', identity: 'readUpdate', limits: 'readWrite' };

/** Each family's declaration: what its function may touch and whether a batch reaches it. */
export const FAMILIES: Readonly<Record<Family, FamilyDeclaration>> = /* @__PURE__ */ (() => ({
  // GET /api/health checks that the database answers; it is public and keeps no counters.
  health: { tables: { identity: 'describe' }, batch: 'the health check is not under /api/v1', uncounted: true },
  // Login, sessions, users, tenants.
  auth: { tables: { identity: 'readWrite', limits: 'readWrite' }, batch: true },
  // API keys.
  keys: { tables: { identity: 'readWrite', limits: 'readWrite' }, batch: true },
  entities: { tables: RECORD_WRITER, batch: true },
  import: { tables: RECORD_WRITER, batch: true },
  // A batch dispatches in-process to every batchable family: entities (records, events), auth and
  // keys (identity readWrite: users, keys), all of them counting in limits.
  batch: { tables: { ...RECORD_WRITER, identity: 'readWrite' }, batch: 'a batch cannot contain another batch' },
  graphql: { tables: RECORD_WRITER, batch: true },
  // Text generation keeps credits and the audit of grants in identity (infra/aws/plugins.ts adds Bedrock).
  plugins: { tables: { identity: 'readWrite', limits: 'readWrite' }, batch: true },
  // Upload records only (its bucket grants are in infra/aws/uploads.ts).
  upload: { tables: { uploads: 'readWrite', ...AUTHENTICATES }, batch: 'uploads carry multipart bodies or move objects in S3; they are sent on their own' },
  // The OpenAPI document and its page: built from code, public and never counted.
  docs: { tables: {}, batch: 'the API description and its page are static documents', uncounted: true },
  // The dashboard's static files.
  dashboard: { tables: {}, batch: 'the dashboard is a page and its static files', uncounted: true },
  // The SSE stream reads change events; its open-stream leases live in limits.
  stream: { tables: { events: 'read', ...AUTHENTICATES }, batch: 'a streamed response (text/event-stream) cannot be a sub-response' },
  // Registrations, delivery log, replays and pings, inbound provider events (the webhooks table).
  webhooks: { tables: { webhooks: 'readWrite', ...AUTHENTICATES }, batch: 'deliveries and inbound receivers act outside the request (a replay or ping waits for a receiver)' },
  // Migration states and reports live in the records table (shared/migrations/state.ts).
  migrations: { tables: { records: 'read', ...AUTHENTICATES }, batch: 'the migration status of the platform operator is read on its own (a session only)' },
}))();

/**
 * Families whose Lambda streams its response (awslambda.streamifyResponse): API Gateway invokes
 * them with responseTransferMode STREAM, and they may run up to the streaming limit.
 */
export const STREAMING_FAMILIES: readonly Family[] = ['stream'];
/** Function timeout of a streaming family: API Gateway's 15-minute streaming limit. */
export const STREAMING_TIMEOUT_SECONDS = 900;

/**
 * The routes before the plugins' in THE route table (shared/routes.ts), then those after them:
 * plugin routes go after GraphQL, before the uploads. The order is the API description's (and the
 * typed client's); each family's routes are declared in shared/route-declarations/<family>.ts.
 */
export const beforePlugins: readonly Route[] = /* @__PURE__ */ (() => [...healthRoutes, ...authRoutes, ...migrationsRoutes, ...keysRoutes, ...batchRoutes, ...importRoutes, ...graphqlRoutes])();

export const afterPlugins: readonly Route[] = /* @__PURE__ */ (() => [...uploadRoutes, ...docsRoutes, ...dashboardRoutes, ...streamRoutes, ...webhooksRoutes, ...entitiesRoutes])();

/** Every route but the plugins', in route-table order. */
export const coreRoutes: readonly Route[] = /* @__PURE__ */ (() => [...beforePlugins, ...afterPlugins])();

export { preflightRoute, routeKey, routeLookup, type RouteLookup } from './route-lookup.js';

/** The core routes' lookup: what the middleware stack uses unless a family serves plugin routes. */
export const coreRouteLookup: RouteLookup = /* @__PURE__ */ routeLookup(coreRoutes);

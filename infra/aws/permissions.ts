/**
 * Least privilege, as data: which tables each operation family may touch, and how.
 *
 *   describe  – dynamodb:DescribeTable only (a liveness check)
 *   read      – table.grantReadData (GetItem, BatchGetItem, Query, Scan, ConditionCheckItem,
 *               DescribeTable, stream reads), indexes included
 *   readUpdate – read plus dynamodb:UpdateItem: changes existing items, never creates or deletes
 *               (no PutItem, DeleteItem, BatchWriteItem)
 *   readWrite – table.grantReadWriteData (read plus PutItem, UpdateItem, DeleteItem, BatchWriteItem)
 *
 * A family not listed here gets DEFAULT_ACCESS: every family authenticates and counts rate limits
 * and idempotency records (limits readWrite). Authenticating reads the identity table and also
 * updates it, best effort: a session's sliding expiry (shared/auth/sessions.ts) and an API key's
 * lastUsedAt/totalRequests (shared/auth/api-keys.ts), hence identity readUpdate rather than read.
 * Give a new family its own line when it needs more.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { TableId, Tables } from './tables.js';

export type TableAccess = 'describe' | 'read' | 'readUpdate' | 'readWrite';

export type TableGrants = Partial<Record<TableId, TableAccess>>;

export const DEFAULT_ACCESS: TableGrants = { identity: 'readUpdate', limits: 'readWrite' };

/** Families that read and write records: the record, its counters and its change event. */
const RECORD_WRITER: TableGrants = { records: 'readWrite', events: 'readWrite', identity: 'readUpdate', limits: 'readWrite' };

export const FAMILY_ACCESS: Readonly<Record<string, TableGrants>> = {
  // GET /api/health checks that the database answers; it is public and keeps no counters.
  health: { identity: 'describe' },
  // Login, sessions, users, tenants.
  auth: { identity: 'readWrite', limits: 'readWrite' },
  // API keys.
  keys: { identity: 'readWrite', limits: 'readWrite' },
  entities: RECORD_WRITER,
  import: RECORD_WRITER,
  // A batch dispatches in-process to every family of functions/batch/families.ts: entities (records,
  // events), auth and keys (identity readWrite: users, keys), all of them counting in limits.
  batch: { ...RECORD_WRITER, identity: 'readWrite' },
  graphql: RECORD_WRITER,
  // Plugins: text generation keeps credits and the audit of grants in identity (infra/aws/plugins.ts adds Bedrock).
  plugins: { identity: 'readWrite', limits: 'readWrite' },
  // Upload records only (its bucket grants are in infra/aws/uploads.ts).
  upload: { uploads: 'readWrite', identity: 'readUpdate', limits: 'readWrite' },
  // The OpenAPI document and its page: built from code, public and never counted.
  docs: {},
  // The dashboard's static files.
  dashboard: {},
  // The SSE stream reads change events; its open-stream leases live in limits.
  stream: { events: 'read', identity: 'readUpdate', limits: 'readWrite' },
  // Registrations, delivery log, replays and pings, inbound provider events (the webhooks table).
  webhooks: { webhooks: 'readWrite', identity: 'readUpdate', limits: 'readWrite' },
  // Migration states and reports live in the records table (shared/migrations/state.ts).
  migrations: { records: 'read', identity: 'readUpdate', limits: 'readWrite' },
};

export function tableAccessFor(family: string): TableGrants {
  return Object.hasOwn(FAMILY_ACCESS, family) ? FAMILY_ACCESS[family] : DEFAULT_ACCESS;
}

/** Grants `grantee` exactly the access the family's line names, nothing else. */
export function grantTableAccess(grantee: IGrantable, family: string, tables: Tables): void {
  for (const [id, access] of Object.entries(tableAccessFor(family)) as [TableId, TableAccess][]) {
    const table = tables[id];
    if (!table) throw new Error(`infra/aws/permissions.ts gives family '${family}' access to table '${id}', which shared/tables.ts does not define`);
    switch (access) {
      case 'describe':
        iam.Grant.addToPrincipal({ grantee, actions: ['dynamodb:DescribeTable'], resourceArns: [table.tableArn] });
        break;
      case 'read':
        table.grantReadData(grantee);
        break;
      case 'readUpdate':
        table.grantReadData(grantee);
        table.grant(grantee, 'dynamodb:UpdateItem');
        break;
      case 'readWrite':
        table.grantReadWriteData(grantee);
        break;
    }
  }
}

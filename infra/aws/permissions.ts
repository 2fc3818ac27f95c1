/**
 * Least privilege, as data: which tables each operation family may touch, and how, is part of the
 * family's declaration (FAMILIES of shared/core-routes.ts, with the meaning of each access).
 * A family not declared there gets DEFAULT_ACCESS: every family authenticates and counts rate
 * limits and idempotency records (limits readWrite). Authenticating reads the identity table and
 * also updates it, best effort: a session's sliding expiry (shared/auth/sessions.ts) and an API
 * key's lastUsedAt/totalRequests (shared/auth/api-keys.ts), hence identity readUpdate rather than read.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { FAMILIES, type TableAccess, type TableGrants } from '../../shared/core-routes.js';
import type { TableId, Tables } from './tables.js';

export type { TableAccess, TableGrants };

export const DEFAULT_ACCESS: TableGrants = { identity: 'readUpdate', limits: 'readWrite' };

export const FAMILY_ACCESS: Readonly<Record<string, TableGrants>> = Object.fromEntries(Object.entries(FAMILIES).map(([family, d]) => [family, d.tables]));

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

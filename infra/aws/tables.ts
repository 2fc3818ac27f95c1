/**
 * The DynamoDB tables, created from THE table definitions in shared/tables.ts.
 * On-demand, point-in-time recovery, TTL and streams as defined there; data is retained when the
 * stack is deleted.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tables, type TableDefinition } from '../../shared/tables.js';

export type TableId = TableDefinition['id'];

/** Every table of shared/tables.ts by id. */
export type Tables = Partial<Record<TableId, dynamodb.Table>>;

/** `records` → `Records`: construct ids and output names. */
export function pascal(id: string): string {
  return id
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
}

/** The environment variable a function reads a table's name from (shared/config.ts). */
export function tableEnvName(id: TableId): string {
  return `TABLE_${id.toUpperCase()}`;
}

function stringKey(name: string): dynamodb.Attribute {
  return { name, type: dynamodb.AttributeType.STRING };
}

export function createTables(scope: Construct, definitions: readonly TableDefinition[] = tables): Tables {
  const created: Tables = {};
  for (const def of definitions) {
    const table = new dynamodb.Table(scope, `${pascal(def.id)}Table`, {
      partitionKey: stringKey(def.partitionKey),
      sortKey: stringKey(def.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: def.ttlAttribute,
      stream: def.stream ? dynamodb.StreamViewType.NEW_AND_OLD_IMAGES : undefined,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of def.globalIndexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: stringKey(index.partitionKey),
        sortKey: stringKey(index.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }
    created[def.id] = table;
  }
  return created;
}

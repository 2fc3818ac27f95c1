/**
 * The DynamoDB tables, created from THE table definitions in shared/tables.ts.
 * On-demand, point-in-time recovery, TTL and streams as defined there; data is retained when the
 * stack is deleted (and when a first deployment fails and rolls back).
 *
 * Retained tables are used again by naming them (context existingTables, parsed by
 * `existingTablesFromContext`): a named table is referenced, not created, and the stack's
 * functions, grants, alarms and outputs point at it. The events table needs its stream's ARN too
 * (the webhook fan-out reads the stream).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { tables, type TableDefinition } from '../../shared/tables.js';

export type TableId = TableDefinition['id'];

/** Every table of shared/tables.ts by id: created by the stack, or existing ones it was given. */
export type Tables = Partial<Record<TableId, dynamodb.ITable>>;

/** A retained table to deploy onto: its name, and for a table with a stream the stream's ARN. */
export interface ExistingTable {
  tableName: string;
  tableStreamArn?: string;
}

export type ExistingTables = Partial<Record<TableId, ExistingTable>>;

const TABLE_NAME = /^[a-zA-Z0-9_.-]{3,255}$/;
const STREAM_ARN = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/([a-zA-Z0-9_.-]{3,255})\/stream\/[\w:.-]+$/;

/**
 * Context existingTables: an object (or its JSON text) of table id → the table's name, or
 * {name, streamArn}; a table with a stream (events) must give streamArn. Throws a clear error on
 * anything else.
 */
export function existingTablesFromContext(value: unknown, definitions: readonly TableDefinition[] = tables): ExistingTables | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('context "existingTables" must be an object of table id → name or {name, streamArn}');
  const out: ExistingTables = {};
  for (const [id, entry] of Object.entries(parsed)) {
    const def = definitions.find((d) => d.id === id);
    if (!def) throw new Error(`context "existingTables": '${id}' is not a table of shared/tables.ts (known: ${definitions.map((d) => d.id).join(', ')})`);
    const { name, streamArn } = typeof entry === 'string' ? { name: entry, streamArn: undefined } : ((entry ?? {}) as { name?: unknown; streamArn?: unknown });
    if (typeof name !== 'string' || !TABLE_NAME.test(name)) throw new Error(`context "existingTables": '${id}' needs a DynamoDB table name, got ${JSON.stringify(entry)}`);
    if (def.stream) {
      const match = typeof streamArn === 'string' ? STREAM_ARN.exec(streamArn) : null;
      if (!match) throw new Error(`context "existingTables": '${id}' has a stream: give {"name": "${name}", "streamArn": "<its LatestStreamArn>"} (aws dynamodb describe-table --table-name ${name} --query Table.LatestStreamArn)`);
      if (match[1] !== name) throw new Error(`context "existingTables": the streamArn of '${id}' belongs to table ${match[1]}, not ${name}`);
    }
    out[def.id] = { tableName: name, ...(def.stream ? { tableStreamArn: streamArn as string } : {}) };
  }
  return out;
}

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

export function createTables(scope: Construct, definitions: readonly TableDefinition[] = tables, existing: ExistingTables = {}): Tables {
  const created: Tables = {};
  for (const def of definitions) {
    const named = existing[def.id];
    if (named) {
      created[def.id] = dynamodb.Table.fromTableAttributes(scope, `${pascal(def.id)}Table`, {
        ...named,
        // Grants cover the table's indexes as they do for a table the stack creates.
        globalIndexes: def.globalIndexes.map((index) => index.name),
      });
      continue;
    }
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

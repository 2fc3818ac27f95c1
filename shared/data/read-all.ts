/**
 * Reading a whole listing partition (the planner's `read-all` path): Query after Query (1 MB each)
 * until the partition ends, on every write shard the layout's readers read, merged in listing
 * order; a filter pushed down to DynamoDB (partial copies let through), the records behind the
 * partial copies fetched (read-records.ts resolveCopies), and only the records `keep` keeps held.
 * Never a Scan.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import type { LiveLayout } from './layout.js';
import { mergeSorted } from './merge.js';
import { shardKeys } from './partitions.js';
import { resolveCopies, type Copy } from './read-records.js';
import type { StoredRecord } from './record-item.js';

export interface ReadAllOptions {
  /** Inclusive bounds on the sort key (listing copies only: both start with digits). */
  range?: { lo: string; hi: string };
  /**
   * A FilterExpression evaluated by DynamoDB (shared/query/expression.ts builds it). Partial
   * copies pass it whatever it says (they may lack the values it tests): `keep` decides on their
   * records.
   */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
  /** Records kept, tested as each Query's items arrive (only those are held in memory). */
  keep?: (record: StoredRecord) => boolean;
  /**
   * Whether a partial copy may be kept, judged on the values it holds (false: its record is not
   * fetched). Without it every partial copy's record is fetched.
   */
  mayKeep?: (copy: StoredRecord) => boolean;
  /**
   * Told the number of items each Query examined (its ScannedCount: what it is billed for), before
   * they are kept; a bounded read throws from it to stop (aggregates: AGGREGATE_SCAN_LIMIT).
   */
  scanned?: (count: number) => void;
}

/** Names the partial-copy escape of a pushed-down filter uses (never produced by the filter builder). */
const PARTIAL_NAMES = { '#partialCopy': 'partial' };
const PARTIAL_VALUES = { ':partialCopy': true };

/** Whether an expression is one parenthesised group (DynamoDB refuses redundant parentheses). */
function enclosed(expression: string): boolean {
  if (!expression.startsWith('(') || !expression.endsWith(')')) return false;
  let depth = 0;
  for (let i = 0; i < expression.length; i++) {
    if (expression[i] === '(') depth += 1;
    else if (expression[i] === ')') depth -= 1;
    if (depth === 0 && i < expression.length - 1) return false;
  }
  return true;
}

/** `(<filter>) OR partial = true`: a partial copy is never dropped by a test on a value it may lack. */
export function withPartialCopies(filter: NonNullable<ReadAllOptions['filter']>): NonNullable<ReadAllOptions['filter']> {
  return {
    expression: `${enclosed(filter.expression) ? filter.expression : `(${filter.expression})`} OR #partialCopy = :partialCopy`,
    names: { ...filter.names, ...PARTIAL_NAMES },
    values: { ...filter.values, ...PARTIAL_VALUES },
  };
}

/**
 * Every record listed in a partition (in listing order) that passes the pushed-down filter and
 * `keep`: Query after Query (1 MB each) until the partition ends. Never a Scan. The partial copies
 * of each Query's answer are resolved with one BatchGetItem per 100 (resolveCopies) before `keep`
 * sees them. Cost: the partition's copies in the key range are read (and billed) whether or not
 * they match, plus the records of the partial copies `mayKeep` lets through.
 */
export async function queryAll(layout: LiveLayout, partition: string, options: ReadAllOptions = {}): Promise<StoredRecord[]> {
  const keys = shardKeys(partition, layout.shards.read);
  if (keys.length === 1) return (await queryShard(layout, partition, options)).map((c) => c.record);
  const shards = await Promise.all(keys.map((key) => queryShard(layout, key, options)));
  return mergeSorted(shards, (c) => c.sk).map((c) => c.record);
}

/** queryAll of one partition key: the copies kept, in listing order. */
async function queryShard(layout: LiveLayout, partition: string, options: ReadAllOptions): Promise<Copy[]> {
  const range = options.range ?? { lo: '0', hi: '9999999999999#\uffff' };
  const filter = options.filter ? withPartialCopies(options.filter) : undefined;
  const records: Copy[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName('records'),
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lo AND :hi',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', ...(filter?.names ?? {}) },
        ExpressionAttributeValues: { ':pk': partition, ':lo': range.lo, ':hi': range.hi, ...(filter?.values ?? {}) },
        ...(filter ? { FilterExpression: filter.expression } : {}),
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    options.scanned?.(out.ScannedCount ?? out.Items?.length ?? 0);
    for (const copy of await resolveCopies(layout, partition, out.Items ?? [], options.mayKeep)) {
      if (!options.keep || options.keep(copy.record)) records.push(copy);
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return records;
}

/**
 * What every item of the records table is built from: a stored record, a key, one item of a
 * transaction, the tables written, and how a value is spelled inside a key or a counter's
 * attribute name. The parts of the records table build on it: partitions.ts (where a record
 * lives), listings.ts and counters.ts (what it is listed and counted under), items.ts and
 * transactions.ts (the items and transactions), unique-keys.ts (uniqueness items).
 */
import type { NativeAttributeValue, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

/** DynamoDB's limit on a partition key value (UTF-8 bytes). */
export const MAX_PARTITION_KEY_BYTES = 2048;

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface StoredRecord {
  /** Entity slug. */
  entity: string;
  id: string;
  tenantId: string;
  ownerId: string;
  createdAt: string;
  updatedAt: string;
  deletedAt?: string;
  /** Incremented by every write; guards concurrent updates. */
  version: number;
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  metas?: Record<string, string>;
  /**
   * On a record item: the version at which its listing copies were last written or confirmed by
   * copyItem (every record write sets it to `version`). Absent or behind `version` (a record of an
   * earlier layout, or last written by one): its copies may be full copies of an older version, so
   * the next update rewrites every copy. Never on a copy; never shown.
   */
  copiesVersion?: number;
  /**
   * On a record item: the index tokens (shared/migrations/layout.ts) whose listing copies and
   * counts this record has; absent on items written before layouts were recorded (then the
   * layout's `legacy` tokens). Writes set it to the tokens they maintain; the migration runner
   * completes the rest. Never on a copy; never shown.
   */
  ix?: string[];
  /**
   * On a record item: the sum tokens (shared/migrations/layout.ts) whose counter attributes hold
   * this record's values; absent: none. Writes set it to the tokens they maintain; the migration
   * runner completes the rest. Never on a copy; never shown.
   */
  sm?: string[];
  /** On a record item: the fields whose uniqueness item this record holds. Never shown. */
  uniques?: string[];
  /**
   * On a record item: the write shard counts its listing copies and counts are kept under
   * (partitions.ts); absent: [1]. Two while a change of `writeShards` is migrated.
   * Never on a copy; never shown.
   */
  ws?: number[];
}

export interface Key {
  pk: string;
  sk: string;
}

/**
 * A record or listing-copy item as the records table holds it: the record, its key and kind, and
 * the marks of a copy (`partial`) or of an earlier version's copy (`_search`). What the document
 * client returns untyped is read as this at the one place it is read (items.ts storedFromItem).
 */
export interface RecordItem extends StoredRecord {
  pk: string;
  sk: string;
  kind: string;
  partial?: boolean;
  _search?: unknown;
}

/** An item as the document client returns it: attributes of any type. */
export type TableItem = Record<string, NativeAttributeValue>;

/** The tables a record's writes go to. */
export interface TableNames {
  records: string;
  events: string;
  /** Revisions and the trash (shared/data/revisions.ts). */
  history: string;
}

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) becomes `%u` and four hex digits, a form
 * encodeURIComponent never produces: values stay distinct and well-formed text is unchanged.
 */
export function encodeKeyValue(text: string): string {
  return text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]|[^\uD800-\uDFFF]+/g, (part) =>
    part.length === 1 && part >= '\uD800' && part <= '\uDFFF' ? `%u${part.charCodeAt(0).toString(16).toUpperCase()}` : encodeURIComponent(part),
  );
}

/**
 * The attribute of a counter item that keeps, beside the count attribute `count` (or a
 * consolidated `#status=todo`), the sum (`s`) or the number of values (`n`) of a summed field
 * under its token: `s:total`, `#status=todo|n:total@3`. `|` and `:` never appear in a count
 * attribute (values are encoded), so no two names collide.
 */
export function sumAttribute(count: string, kind: 's' | 'n', token: string): string {
  return count === 'count' ? `${kind}:${token}` : `${count}|${kind}:${token}`;
}

/** The attribute of a base partition's counter items counting one of its field partitions (`#status=todo`). */
export function countAttribute(field: string, value: unknown): string {
  return `#${field}=${encodeKeyValue(String(value))}`;
}

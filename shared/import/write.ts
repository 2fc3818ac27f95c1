/**
 * Batched writes of an import: many new records in few DynamoDB requests, each request atomic.
 *
 * A record's writes (the record, a copy per listing partition, its change event when wanted) are
 * packed with other records' into TransactWriteItems of at most 100 items (and ~3.5 MB); the
 * counters of the partitions those records enter ride in the SAME transaction, one Update per
 * counter item with `ADD <n>` for each partition it counts (n = the records of that transaction
 * in it), all in one counter shard per transaction (shared/data/counters.ts). So:
 * - a record, its copies, its event and its share of every counter commit together or not at all:
 *   counters never drift from the copies, whatever fails part-way;
 * - each record Put is conditional (`attribute_not_exists(pk)`): with ids derived from the
 *   Idempotency-Key (shared/import/ids.ts) a re-run of the same import finds the records an
 *   earlier attempt wrote, drops them from the transaction (their counters were applied with
 *   them) and writes only the rest — no duplicates, no double counting;
 * - a record whose uniqueness item (a `unique: true` value) another record took after the
 *   import's own check fails alone (`taken`), and the others of its transaction are repacked;
 * - a transaction cancelled by a concurrent writer on a shared counter (TransactionConflict) is
 *   retried with jittered back-off, its counters moved to another shard; any other failure fails
 *   only that transaction's records, which are reported per item, and the next transaction still
 *   runs.
 * Tasks (record + 5 to 7 copies, an event; 2 counter items per owner, plus the assignees'):
 * 10 to 16 records per transaction (bench/scenarios/import.ts counts the write requests).
 */
import {
  CONFLICT_ATTEMPTS,
  conflictBackoff,
  counterUpdates,
  listings,
  newRecordPuts,
  randomShard,
  readRecords,
  reshard,
  sendTransaction,
  uniquePutField,
  writeCounts,
  type CounterDelta,
  type Listing,
  type LiveLayout,
  type StoredRecord,
  type TableNames,
  type TransactItem,
} from '../data/index.js';
import { toApiError } from '../errors.js';

export const MAX_TRANSACTION_ITEMS = 100;
/** TransactWriteItems carries at most 4 MB; keep a margin for attribute overhead. */
export const MAX_TRANSACTION_BYTES = 3_500_000;

export interface PlannedRecord {
  /** Position of the item in the request. */
  index: number;
  record: StoredRecord;
  /** The change event to write with it (none: no event). */
  event?: Record<string, unknown>;
  /** Its revision (shared/data/revisions.ts): none when the entity keeps no history. */
  revision?: TransactItem[];
}

export interface Chunk {
  records: PlannedRecord[];
  /** Where each record's conditional Put is in `items` (same order as `records`). */
  starts: number[];
  items: TransactItem[];
}

function putsOf(layout: LiveLayout, planned: PlannedRecord, tables: TableNames): { puts: TransactItem[]; entered: Listing[]; bytes: number } {
  const entered = listings(layout, planned.record);
  const puts: TransactItem[] = [
    ...newRecordPuts(layout, planned.record, entered, tables),
    ...(planned.event ? [{ Put: { TableName: tables.events, Item: planned.event } }] : []),
    ...(planned.revision ?? []),
  ];
  return { puts, entered, bytes: JSON.stringify(puts).length };
}

/**
 * Packs records into transactions (pure): each record's items whole in one transaction, then one
 * counter Update per counter item of that transaction (in shard `shard`); at most
 * MAX_TRANSACTION_ITEMS items each.
 */
export function packTransactions(
  layout: LiveLayout,
  planned: readonly PlannedRecord[],
  tables: TableNames,
  limits = { items: MAX_TRANSACTION_ITEMS, bytes: MAX_TRANSACTION_BYTES },
  shard = randomShard(),
): Chunk[] {
  const chunks: Chunk[] = [];
  let records: PlannedRecord[] = [];
  let starts: number[] = [];
  let puts: TransactItem[] = [];
  let counters: CounterDelta[] = [];
  let bytes = 0;
  const counterItems = (entries: Iterable<CounterDelta>) => counterUpdates(tables, entries, shard);
  const close = () => {
    if (records.length === 0) return;
    chunks.push({ records, starts, items: [...puts, ...counterItems(counters)] });
    records = [];
    starts = [];
    puts = [];
    counters = [];
    bytes = 0;
  };
  for (const p of planned) {
    const own = putsOf(layout, p, tables);
    const counted = writeCounts(layout, undefined, { record: p.record, listings: own.entered });
    const counterCount = counterItems([...counters, ...counted]).length;
    if (records.length && (puts.length + own.puts.length + counterCount > limits.items || bytes + own.bytes > limits.bytes)) close();
    records.push(p);
    starts.push(puts.length);
    puts.push(...own.puts);
    bytes += own.bytes;
    counters.push(...counted);
  }
  close();
  return chunks;
}

export interface WriteOutcome {
  /** Records written by this call, by request index. */
  written: Map<number, StoredRecord>;
  /** Records that already existed with the planned id (an earlier attempt of the same import). */
  existing: Map<number, StoredRecord>;
  /** Records not written: the error message, by request index. */
  failed: Map<number, string>;
  /**
   * Records not written because another record took one of their unique values meanwhile (after
   * the import's own check): the fields, by request index. An invalid item, not a fault.
   */
  taken: Map<number, string[]>;
  /** DynamoDB write requests sent (TransactWriteItems calls, retries included). */
  writeRequests: number;
}

interface Cancelled {
  name?: string;
  CancellationReasons?: { Code?: string }[];
}

/**
 * Writes the planned records transaction by transaction (see the module comment). `isOurs` says
 * whether a record found under a planned id is the one this import meant to write (same tenant,
 * same owner): only then is it reported as imported, otherwise the item fails.
 */
export async function writeRecords(
  layout: LiveLayout,
  planned: readonly PlannedRecord[],
  tables: TableNames,
  isOurs: (found: StoredRecord, planned: StoredRecord) => boolean,
): Promise<WriteOutcome> {
  const outcome: WriteOutcome = { written: new Map(), existing: new Map(), failed: new Map(), taken: new Map(), writeRequests: 0 };
  const queue = packTransactions(layout, planned, tables);
  while (queue.length) {
    const chunk = queue.shift()!;
    let conflicts = 0;
    for (;;) {
      try {
        outcome.writeRequests += 1;
        await sendTransaction(chunk.items);
        for (const p of chunk.records) outcome.written.set(p.index, p.record);
        break;
      } catch (error) {
        const e = error as Cancelled;
        const reasons = e.name === 'TransactionCanceledException' ? (e.CancellationReasons ?? []) : [];
        // Which records' conditional Put failed: they exist already.
        const clashing = chunk.records.filter((_, i) => reasons[chunk.starts[i]]?.Code === 'ConditionalCheckFailed');
        // Which other records' uniqueness Puts failed: another record holds the value.
        const taken = new Map<PlannedRecord, string[]>();
        chunk.records.forEach((p, i) => {
          if (clashing.includes(p)) return;
          const end = i + 1 < chunk.starts.length ? chunk.starts[i + 1] : chunk.items.length;
          for (let at = chunk.starts[i]; at < end; at++) {
            const field = uniquePutField(chunk.items[at]);
            if (field !== undefined && reasons[at]?.Code === 'ConditionalCheckFailed') taken.set(p, [...(taken.get(p) ?? []), field]);
          }
        });
        if (clashing.length || taken.size) {
          const found = clashing.length ? await readRecords(layout, clashing.map((p) => p.record)) : new Map<string, StoredRecord>();
          for (const p of clashing) {
            const existing = found.get(p.record.id);
            if (existing && isOurs(existing, p.record)) outcome.existing.set(p.index, existing);
            else outcome.failed.set(p.index, 'a record with the same id exists already');
          }
          for (const [p, fields] of taken) outcome.taken.set(p.index, fields);
          const rest = chunk.records.filter((p) => !clashing.includes(p) && !taken.has(p));
          // The others of the transaction, repacked (their counters without the clashing records).
          queue.unshift(...packTransactions(layout, rest, tables));
          break;
        }
        if (reasons.some((r) => r.Code === 'TransactionConflict') && ++conflicts < CONFLICT_ATTEMPTS) {
          await conflictBackoff(conflicts);
          chunk.items = reshard(chunk.items, randomShard());
          continue;
        }
        const apiError = toApiError(error);
        const message = `not written (${apiError.code}: ${apiError.message}); nothing of this item was stored, retry it`;
        for (const p of chunk.records) outcome.failed.set(p.index, message);
        break;
      }
    }
  }
  return outcome;
}

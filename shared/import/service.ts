/**
 * Bulk import (SPEC.md Bulk operations, CONTRACT.md):
 *
 * - `POST /api/v1/import/{entity}` `{items, options?: {skipInvalid, returnFailures}}` → 201
 *   `{created, failed, items, failures?}`. 1 to 100 items. Every item is validated exactly as a
 *   single CREATE (schema, defaults, references: one BatchGetItem for all items) BEFORE anything is
 *   written. skipInvalid false (default): the first invalid item aborts with 422 VALIDATION_FAILED
 *   naming its index (`details` keyed `items[<index>].<field>`), nothing is created. skipInvalid
 *   true: invalid items are counted in `failed` and skipped. A value of a `unique: true` field
 *   that another record holds, or that an earlier item of the same import has, makes the item
 *   invalid (skipInvalid false: 409 UNIQUE_VIOLATION when that is the first invalid item's only
 *   problem). `failures` ([{index, item, error}],
 *   zero-based index) only when returnFailures is true. Each record gets its `<name>.created`
 *   change event, as a single create would.
 * - `POST /api/v1/import/tasks` `{tasks (1..100), assignUsers?, notify?}` → 201
 *   `{imported, failed, tasks, errors: [{index, task, error}]}`: invalid items are reported in
 *   `errors` and the others imported. assignUsers true resolves each item's `assigneeEmail` to the
 *   id of that user in the caller's tenant (an unknown e-mail fails that item); without it an
 *   item carrying assigneeEmail fails. notify true writes a `task.created` change event per task
 *   (webhooks and the stream read those); false writes none.
 *
 * Writes: shared/import/write.ts (TransactWriteItems of up to 100 items holding records, copies,
 * events AND their counters: counters can never disagree with the copies, with or without events).
 * Retries: with an Idempotency-Key the middleware replays a finished import; a re-run after a
 * fault part-way plans the same ids (shared/import/ids.ts) and writes only what is missing. A
 * write fault fails only the records of the failed transaction(s): the answer is then 503
 * IMPORT_INCOMPLETE with the per-item report in `data` (failures/errors say "not written ...",
 * with the fault), which releases the Idempotency-Key so that the same request can be retried.
 */
import { randomBytes } from 'node:crypto';
import {
  batchGet,
  batchKey,
  emailKey,
  eventItem,
  revisionPut,
  writeContextOf,
  holdsValue,
  recordTables,
  uniqueFields,
  uniqueKey,
  uniqueKeyFits,
  userKey,
  type Key,
  type StoredRecord,
} from '../data/index.js';
import { loadLayouts, type LiveLayouts } from '../migrations/index.js';
import {
  present,
  type PublicRecord,
  referenceChecks,
  referenceProblem,
  referenceReads,
  requireCaller,
  requireOperation,
  requirePermission,
  startOperation,
} from '../entities/rules.js';
import { ApiError, ConflictError, ValidationError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { newId } from '../ids.js';
import { checkCreate, findEntity, unvalidatedReferences, type LoadedEntity, type WriteInput } from '../registry/index.js';
import { importRecordId, importSuffix, type IdSeed } from './ids.js';
import { writeRecords, type PlannedRecord } from './write.js';

export const MAX_IMPORT_ITEMS = 100;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** "title is required; priority must be one of: low, medium, high" */
export function describeDetails(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([field, message]) => `${field} ${String(message)}`)
    .join('; ');
}

/** An invalid item is echoed whole up to this many characters of JSON; a larger one in part (echoOf). */
export const MAX_ECHO_CHARS = 2048;
/** A top-level value of a larger item is kept up to this many characters of JSON. */
const MAX_ECHO_VALUE_CHARS = 256;

/**
 * The item as a report echoes it: whole when small; otherwise its top-level keys, each value
 * kept when small and else replaced by a note of its size. `details` names the failing fields;
 * the echo only helps the client match an entry to its input, so it never carries a huge value.
 */
export function echoOf(item: unknown): unknown {
  const whole = JSON.stringify(item) ?? 'null';
  if (whole.length <= MAX_ECHO_CHARS) return item;
  if (!isPlainObject(item)) return `(${whole.length} characters of JSON omitted)`;
  const out: Record<string, unknown> = {};
  let budget = MAX_ECHO_CHARS;
  for (const [key, value] of Object.entries(item)) {
    if (budget <= 0) break;
    const name = key.length > 100 ? `${key.slice(0, 100)}…` : key;
    const text = JSON.stringify(value) ?? 'null';
    const kept = text.length <= MAX_ECHO_VALUE_CHARS ? value : `(${text.length} characters of JSON omitted)`;
    Object.defineProperty(out, name, { value: kept, enumerable: true, writable: true, configurable: true });
    budget -= name.length + Math.min(text.length, MAX_ECHO_VALUE_CHARS);
  }
  return out;
}

export interface ItemResult {
  index: number;
  item: unknown;
  /** The values to write (valid items). */
  input?: WriteInput;
  /** Why the item is invalid, keyed by field. */
  details?: Record<string, string>;
  /** Fields of `details` whose value another record (or an earlier item) already holds. */
  taken?: string[];
}

const TAKEN = 'must be unique: another record already has this value';

function markTaken(result: ItemResult, field: string, message = TAKEN): void {
  result.details ??= {};
  result.details[field] = message;
  result.taken = [...(result.taken ?? []), field];
  delete result.input;
}

/**
 * The unique values of the valid items, checked before anything is written: an item whose value
 * an earlier item of the import has, or another record holds already (ONE BatchGetItem per 100
 * keys), is invalid like any other (skipInvalid decides). A value held by the very record an
 * earlier attempt of the same import wrote (same derived id) is not a clash. A record that takes
 * a value after this check fails at write time (shared/import/write.ts `taken`).
 */
async function checkUniqueValues(entity: LoadedEntity, results: ItemResult[], auth: AuthContext, seed: IdSeed | undefined): Promise<void> {
  const fields = uniqueFields(entity);
  if (fields.length === 0) return;
  const valueOf = (r: ItemResult, field: string) => (entity.fields[field].generated === 'caller' ? auth.user.id : r.input!.data[field]);
  const seen = new Map<string, number>();
  const wanted: { result: ItemResult; field: string; key: Key }[] = [];
  for (const r of results) {
    if (!r.input) continue;
    const keys: { field: string; key: Key }[] = [];
    for (const field of fields) {
      const value = valueOf(r, field);
      if (!holdsValue(value)) continue;
      if (!uniqueKeyFits(entity, auth.tenantId, field, value)) {
        r.details = { ...(r.details ?? {}), [field]: 'is too long for a unique field (at most about 1900 bytes once URL-encoded)' };
        delete r.input;
      } else keys.push({ field, key: uniqueKey(entity, auth.tenantId, field, value) });
    }
    for (const { field, key } of keys) {
      const earlier = seen.get(key.pk);
      if (earlier !== undefined) markTaken(r, field, `must be unique: item ${earlier} of this import has the same value`);
    }
    // Only an item still valid claims its values for the items after it.
    if (!r.input) continue;
    for (const { field, key } of keys) {
      seen.set(key.pk, r.index);
      wanted.push({ result: r, field, key });
    }
  }
  if (wanted.length === 0) return;
  const found = await batchGet([{ table: 'records', keys: wanted.map((w) => w.key) }]);
  for (const { result, field, key } of wanted) {
    const holder = found.get(batchKey('records', key));
    if (!holder) continue;
    // The record an earlier attempt of this very import wrote (ids derived from the Idempotency-Key).
    if (seed && holder.recordId === importRecordId(entity, result.index, result.item, seed, 0)) continue;
    markTaken(result, field);
  }
}

/** The first invalid item aborts the import: 409 when only its unique values are the problem, else 422. */
function abortOn(first: ItemResult): ApiError {
  const named = Object.fromEntries(Object.entries(first.details!).map(([field, message]) => [`items[${first.index}].${field}`, message]));
  const message = `Item ${first.index} is invalid (${describeDetails(first.details!)}); nothing was imported`;
  const onlyTaken = Object.keys(first.details!).every((f) => first.taken?.includes(f));
  return onlyTaken ? new ConflictError(message, 'UNIQUE_VIOLATION', named) : new ValidationError(named, message);
}

/** Items whose unique value was taken between the check and the write: reported like invalid items. */
function takenAtWrite(written: WrittenItems, results: ItemResult[]): void {
  for (const r of results) for (const field of written.taken.get(r.index) ?? []) markTaken(r, field);
}

/**
 * The reference checks of every item at once (ONE BatchGetItem per 100 keys, across tables):
 * the same rules as shared/entities/references.ts, reported into each item's details.
 */
async function checkAllReferences(layouts: LiveLayouts, entity: LoadedEntity, results: ItemResult[], auth: AuthContext): Promise<void> {
  const pending = results.map((r) => {
    const data = r.input ? r.input.data : unvalidatedReferences(entity, r.item, r.details ?? {});
    return { result: r, data, checks: isPlainObject(r.item) ? referenceChecks(entity, data) : [] };
  });
  const requests = referenceReads(layouts, pending.flatMap((p) => p.checks), auth);
  if (requests.length === 0) return;
  const found = await batchGet(requests);
  for (const { result, checks, data } of pending) {
    for (const check of checks) {
      const problem = referenceProblem(layouts, check, data, found, auth);
      if (!problem) continue;
      result.details ??= {};
      result.details[check.field] = problem;
      delete result.input;
    }
  }
}

/** Validates every item as a single create would (no writes). */
export async function validateItems(
  layouts: LiveLayouts,
  entity: LoadedEntity,
  items: readonly unknown[],
  auth: AuthContext,
  pre: Map<number, Record<string, string>> = new Map(),
  seed?: IdSeed,
): Promise<ItemResult[]> {
  const results: ItemResult[] = items.map((item, index) => {
    if (!isPlainObject(item)) return { index, item, details: { item: 'must be a JSON object' } };
    const earlier = pre.get(index);
    try {
      const input = checkCreate(entity, item);
      return earlier ? { index, item, details: { ...earlier } } : { index, item, input };
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return { index, item, details: { ...(earlier ?? {}), ...((error.details ?? {}) as Record<string, string>) } };
    }
  });
  await checkAllReferences(layouts, entity, results, auth);
  await checkUniqueValues(entity, results, auth, seed);
  return results;
}

function newRecord(entity: LoadedEntity, auth: AuthContext, input: WriteInput, id: string, now: string): StoredRecord {
  const data: Record<string, unknown> = { ...input.data };
  for (const [name, field] of Object.entries(entity.fields)) {
    if (field.generated === 'caller') data[name] = auth.user.id;
  }
  const record: StoredRecord = { entity: entity.slug, id, tenantId: auth.tenantId, ownerId: auth.user.id, createdAt: now, updatedAt: now, version: 1, data };
  if (input.metadata) record.metadata = input.metadata;
  if (input.metas) record.metas = input.metas as Record<string, string>;
  return record;
}

/** What an import takes: who is calling, the JSON body (a CSV body already turned into it), and the Idempotency-Key's seed of record ids, if any. */
export interface ImportInput {
  caller: AuthContext | undefined;
  body: unknown;
  seed?: IdSeed;
}

export interface WrittenItems {
  /** The import's operation (its undo: POST /api/v1/operations/{operationId}/undo). */
  operationId: string;
  /** Imported records by request index (written now or by an earlier attempt). */
  records: Map<number, PublicRecord>;
  /** Write failures by request index. */
  failed: Map<number, string>;
  /** Items whose unique value another record took meanwhile: the fields, by request index. */
  taken: Map<number, string[]>;
  writeRequests: number;
}

/** Plans and writes the valid items (in request order). */
async function writeValid(layouts: LiveLayouts, entity: LoadedEntity, valid: ItemResult[], seed: IdSeed | undefined, caller: AuthContext, withEvents: boolean): Promise<WrittenItems> {
  const layout = layouts.of(entity);
  const now = new Date().toISOString();
  const tables = recordTables();
  const { operationId, auth, finish } = startOperation(caller);
  const context = writeContextOf(auth, 'create');
  const planned: PlannedRecord[] = valid.map((r) => {
    const record = newRecord(entity, auth, r.input!, importRecordId(entity, r.index, r.item, seed, Date.parse(now)), now);
    const event = withEvents
      ? eventItem(layout, 'created', record, present(entity, record), {
          eventId: seed ? `evt_${importSuffix(record.id)}` : newId('evt'),
          suffix: seed ? importSuffix(record.id) : randomBytes(6).toString('hex'),
          now,
        })
      : undefined;
    return { index: r.index, record, ...(event ? { event } : {}), revision: revisionPut(entity, tables.history, undefined, record, context, new Date(now)) };
  });
  const outcome = await writeRecords(layout, planned, tables, (found, mine) => found.tenantId === mine.tenantId && found.ownerId === mine.ownerId && !found.deletedAt);
  const records = new Map<number, PublicRecord>();
  for (const [index, record] of [...outcome.written, ...outcome.existing]) records.set(index, present(entity, record));
  for (const record of outcome.written.values()) auth.journal!.push({ entity: entity.slug, id: record.id, revision: record.version });
  await finish();
  return { operationId, records, failed: outcome.failed, taken: outcome.taken, writeRequests: outcome.writeRequests };
}

/**
 * A write fault part-way: 503 IMPORT_INCOMPLETE whose body still carries the per-item report
 * (`data`, the shape of the 201). Being an error, it releases the Idempotency-Key: the same
 * request retried with the same key re-runs, finds the records already written under their
 * derived ids (reported as imported, not written again) and writes the rest.
 */
function incomplete(written: WrittenItems, report: Record<string, unknown>): ApiError | undefined {
  const missing = written.failed.size;
  if (missing === 0) return undefined;
  return new ApiError(
    503,
    'IMPORT_INCOMPLETE',
    `${missing} item(s) were not written because of a database fault (the others were); retry the same request with the same Idempotency-Key to complete it without duplicates`,
    { headers: { 'Retry-After': '1' }, extra: { data: report } },
  );
}

function itemsOf(body: unknown, name: string): unknown[] {
  const value = isPlainObject(body) ? body[name] : undefined;
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_IMPORT_ITEMS) {
    throw new ValidationError({ [name]: `must be an array of 1 to ${MAX_IMPORT_ITEMS} objects` });
  }
  return value;
}

function booleanOption(container: Record<string, unknown>, name: string, path: string, details: Record<string, string>): boolean {
  const value = container[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') {
    details[path] = 'must be a boolean';
    return false;
  }
  return value;
}

function checkKeys(container: Record<string, unknown>, allowed: readonly string[], prefix: string, details: Record<string, string>): void {
  for (const key of Object.keys(container)) if (!allowed.includes(key)) details[`${prefix}${key}`] = 'is not a known option';
}

export interface ImportFailure {
  index: number;
  item: unknown;
  error: string;
  details?: Record<string, string>;
}

/** POST /api/v1/import/{entity}. */
export async function importRecords(entity: LoadedEntity, { caller, body: payload, seed }: ImportInput): Promise<Record<string, unknown>> {
  requireOperation(entity, 'create');
  const auth = requireCaller(caller);
  requirePermission(entity, 'create', auth);
  const body = isPlainObject(payload) ? payload : {};
  const details: Record<string, string> = {};
  checkKeys(body, ['items', 'options'], '', details);
  const options = body.options ?? {};
  let skipInvalid = false;
  let returnFailures = false;
  if (!isPlainObject(options)) details.options = 'must be an object';
  else {
    checkKeys(options, ['skipInvalid', 'returnFailures'], 'options.', details);
    skipInvalid = booleanOption(options, 'skipInvalid', 'options.skipInvalid', details);
    returnFailures = booleanOption(options, 'returnFailures', 'options.returnFailures', details);
  }
  if (Object.keys(details).length) throw new ValidationError(details);
  const items = itemsOf(body, 'items');

  // Every item is checked and written with the layout loaded once, for the request.
  const layouts = await loadLayouts();
  const results = await validateItems(layouts, entity, items, auth, new Map(), seed);
  const invalid = results.filter((r) => r.details);
  if (!skipInvalid && invalid.length) throw abortOn(invalid[0]);
  const written = await writeValid(layouts, entity, results.filter((r) => r.input), seed, auth, true);
  takenAtWrite(written, results);

  const failures: ImportFailure[] = [];
  for (const r of results) {
    if (r.details) failures.push({ index: r.index, item: echoOf(r.item), error: describeDetails(r.details), details: r.details });
    else if (written.failed.has(r.index)) failures.push({ index: r.index, item: echoOf(r.item), error: written.failed.get(r.index)! });
  }
  const created = [...written.records.entries()].sort(([a], [b]) => a - b).map(([, record]) => record);
  const report = { operationId: written.operationId, created: created.length, failed: failures.length, items: created, ...(returnFailures ? { failures } : {}) };
  const fault = incomplete(written, { ...report, failures });
  if (fault) throw fault;
  return report;
}

// ---------- tasks ----------

/** assigneeEmail → user id of the caller's tenant (two BatchGetItem: e-mails, then users). */
async function resolveEmails(emails: string[], auth: AuthContext): Promise<Map<string, string>> {
  // No stored e-mail is longer than 254 characters (and DynamoDB refuses over-long keys).
  const unique = [...new Set(emails.map((e) => e.trim().toLowerCase()))].filter((e) => e.length <= 254);
  const resolved = new Map<string, string>();
  if (unique.length === 0) return resolved;
  const pointers = await batchGet([{ table: 'identity', keys: unique.map((e) => emailKey(e)) }]);
  const byEmail = new Map<string, string>();
  for (const email of unique) {
    const pointer = pointers.get(batchKey('identity', emailKey(email)));
    if (typeof pointer?.userId === 'string') byEmail.set(email, pointer.userId);
  }
  if (byEmail.size === 0) return resolved;
  const users = await batchGet([{ table: 'identity', keys: [...new Set(byEmail.values())].map((id) => userKey(id)) }]);
  for (const [email, userId] of byEmail) {
    const user = users.get(batchKey('identity', userKey(userId)));
    if (user && user.tenantId === auth.tenantId) resolved.set(email, userId);
  }
  return resolved;
}

/** POST /api/v1/import/tasks. */
export async function importTasks({ caller, body: payload, seed }: ImportInput): Promise<Record<string, unknown>> {
  const entity = findEntity('tasks');
  if (!entity) throw new ApiError(404, 'ENTITY_NOT_FOUND', "Entity 'tasks' is not registered");
  requireOperation(entity, 'create');
  const auth = requireCaller(caller);
  requirePermission(entity, 'create', auth);
  const body = isPlainObject(payload) ? payload : {};
  const details: Record<string, string> = {};
  checkKeys(body, ['tasks', 'assignUsers', 'notify'], '', details);
  const assignUsers = booleanOption(body, 'assignUsers', 'assignUsers', details);
  const notify = booleanOption(body, 'notify', 'notify', details);
  if (Object.keys(details).length) throw new ValidationError(details);
  const tasks = itemsOf(body, 'tasks');

  // assigneeEmail is not a task field: taken out of each item, resolved (assignUsers) or refused.
  const pre = new Map<number, Record<string, string>>();
  const emails = tasks.map((t) => (isPlainObject(t) && 'assigneeEmail' in t ? t.assigneeEmail : undefined));
  const resolved = assignUsers ? await resolveEmails(emails.filter((e): e is string => typeof e === 'string'), auth) : new Map<string, string>();
  const bodies = tasks.map((task, index) => {
    if (!isPlainObject(task) || !('assigneeEmail' in task)) return task;
    const { assigneeEmail, ...rest } = task;
    if (!assignUsers) pre.set(index, { assigneeEmail: 'is only accepted with assignUsers: true' });
    else if (typeof assigneeEmail !== 'string') pre.set(index, { assigneeEmail: 'must be a string' });
    else {
      const userId = resolved.get(assigneeEmail.trim().toLowerCase());
      if (!userId) pre.set(index, { assigneeEmail: `no user of your tenant has the e-mail ${assigneeEmail}` });
      else return { ...rest, assigneeId: userId };
    }
    return rest;
  });

  const layouts = await loadLayouts();
  const results = await validateItems(layouts, entity, bodies, auth, pre, seed);
  const written = await writeValid(layouts, entity, results.filter((r) => r.input), seed, auth, notify);
  takenAtWrite(written, results);
  const errors: { index: number; task: unknown; error: string; details?: Record<string, string> }[] = [];
  for (const r of results) {
    if (r.details) errors.push({ index: r.index, task: echoOf(tasks[r.index]), error: describeDetails(r.details), details: r.details });
    else if (written.failed.has(r.index)) errors.push({ index: r.index, task: echoOf(tasks[r.index]), error: written.failed.get(r.index)! });
  }
  const imported = [...written.records.entries()].sort(([a], [b]) => a - b).map(([, record]) => record);
  const report = { operationId: written.operationId, imported: imported.length, failed: errors.length, tasks: imported, errors };
  const fault = incomplete(written, report);
  if (fault) throw fault;
  return report;
}

/**
 * `import` and `export` of the admin CLI: files of any size, streamed, through the API.
 *
 * Import reads CSV (header row = field names), NDJSON (one object a line) or JSON (an array),
 * sends batches of 100 rows to POST /api/v1/import/{entity} (CSV as text/csv, the rest as JSON),
 * each with an Idempotency-Key derived from its rows: a re-run of the same file after a crash is
 * answered from the first run's responses, or writes under the same derived record ids, so
 * nothing is imported twice. Rows the API refuses are reported per row, in a file, and the
 * import goes on.
 *
 * Export pages through GET /api/v1/{entity} with a cursor and writes CSV (the columns of the
 * entity's OPTIONS schema, lists joined with `;`), NDJSON or JSON: the CSV imports back as is.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { stringify as stringifySync } from 'csv-stringify/sync';
import { stringify } from 'csv-stringify';
import { ChoreError } from './chores.js';
import { call, type ApiTarget } from './api-client.js';
import { progress } from './progress.js';

export const BATCH_SIZE = 100;
/** Batches in flight at once. */
export const DEFAULT_CONCURRENCY = 1;

export type Format = 'csv' | 'ndjson' | 'json';

export function formatOf(file: string, given?: string): Format {
  const format = given ?? (/\.csv$/i.test(file) ? 'csv' : /\.(ndjson|jsonl)$/i.test(file) ? 'ndjson' : /\.json$/i.test(file) ? 'json' : undefined);
  if (format !== 'csv' && format !== 'ndjson' && format !== 'json') throw new ChoreError(`Cannot tell the format of ${file}: name it .csv, .ndjson or .json, or pass --format`);
  return format;
}

/** One row of the file: its number (1 = the first data row), and its content or why it cannot be read. */
interface Row {
  row: number;
  csv?: Record<string, string>;
  item?: unknown;
  error?: string;
}

async function* rowsOf(file: string, format: Format): AsyncGenerator<Row> {
  if (format === 'csv') {
    const parser = createReadStream(file).pipe(parse({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: true }));
    let row = 0;
    for await (const record of parser) yield { row: ++row, csv: record as Record<string, string> };
  } else if (format === 'ndjson') {
    let row = 0;
    for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      if (!line.trim()) continue;
      row += 1;
      try {
        const item = JSON.parse(line);
        yield item && typeof item === 'object' && !Array.isArray(item) ? { row, item } : { row, error: 'is not a JSON object' };
      } catch {
        yield { row, error: 'is not valid JSON' };
      }
    }
  } else {
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new ChoreError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    const list = Array.isArray(data) ? data : (data as { items?: unknown[] })?.items;
    if (!Array.isArray(list)) throw new ChoreError(`${file} must hold a JSON array of objects (or {"items": [...]})`);
    let row = 0;
    for (const item of list) {
      row += 1;
      yield item && typeof item === 'object' && !Array.isArray(item) ? { row, item } : { row, error: 'is not a JSON object' };
    }
  }
}

async function countRows(file: string, format: Format): Promise<number> {
  let n = 0;
  for await (const _ of rowsOf(file, format)) n += 1;
  return n;
}

export interface RowError {
  row: number;
  error: string;
  details?: Record<string, string>;
  item?: unknown;
}

export interface ImportSummary {
  entity: string;
  rows: number;
  imported: number;
  /** Of `imported`: rows an earlier run had imported already (answered from its responses). */
  alreadyImported: number;
  failed: number;
  seconds: number;
  errorsFile?: string;
}

interface Batch {
  rows: Row[];
}

function batchRequest(entity: string, batch: Batch, format: Format, options: { notify?: boolean; assignUsers?: boolean }): { path: string; body: string; contentType: string } {
  const tasks = entity === 'tasks';
  if (format === 'csv') {
    const columns = [...new Set(batch.rows.flatMap((r) => Object.keys(r.csv!)))];
    const body = stringifySync(batch.rows.map((r) => columns.map((c) => r.csv![c] ?? '')), { header: true, columns });
    const query = tasks ? `?notify=${options.notify === true}&assignUsers=${options.assignUsers === true}` : '?skipInvalid=true&returnFailures=true';
    return { path: `/api/v1/import/${encodeURIComponent(entity)}${query}`, body, contentType: 'text/csv' };
  }
  const items = batch.rows.map((r) => r.item);
  const body = tasks
    ? { tasks: items, notify: options.notify === true, assignUsers: options.assignUsers === true }
    : { items, options: { skipInvalid: true, returnFailures: true } };
  return { path: `/api/v1/import/${encodeURIComponent(entity)}`, body: JSON.stringify(body), contentType: 'application/json' };
}

/** The Idempotency-Key of a batch: the entity, where the batch starts and what it holds. */
export function batchKey(entity: string, firstRow: number, body: string): string {
  return `era-import-${entity}-${firstRow}-${createHash('sha256').update(body).digest('hex').slice(0, 32)}`;
}

export async function importFile(
  target: ApiTarget,
  entity: string,
  file: string,
  options: { format?: string; errors?: string; notify?: boolean; assignUsers?: boolean; concurrency?: number } = {},
): Promise<ImportSummary> {
  const format = formatOf(file, options.format);
  const started = Date.now();
  const total = await countRows(file, format);
  const errorsFile = options.errors ?? `${file}.errors.ndjson`;
  rmSync(errorsFile, { force: true });
  let errorsOut: WriteStream | undefined;
  const summary: ImportSummary = { entity, rows: 0, imported: 0, alreadyImported: 0, failed: 0, seconds: 0 };
  const report = async (e: RowError) => {
    summary.failed += 1;
    errorsOut ??= createWriteStream(errorsFile, { mode: 0o600 });
    if (!errorsOut.write(`${JSON.stringify(e)}\n`)) await once(errorsOut, 'drain');
  };
  const bar = progress(`import ${entity}`, total, {
    // Each batch carries an Idempotency-Key derived from its rows: a re-run skips what was imported.
    interrupted: (done) =>
      `import ${entity} interrupted after ${done} of ${total} rows. Run the same command again to resume: the rows already imported are recognised and not imported twice.`,
  });

  interface Sent {
    batch: Batch;
    readable: Row[];
    answer?: { status: number; headers: Headers; body: any };
  }
  const post = async (batch: Batch): Promise<Sent> => {
    const readable = batch.rows.filter((r) => !r.error);
    if (!readable.length) return { batch, readable };
    const request = batchRequest(entity, { rows: readable }, format, options);
    const answer = await call(target, 'POST', request.path, {
      body: request.body,
      contentType: request.contentType,
      headers: { 'Idempotency-Key': batchKey(entity, readable[0].row, request.body) },
    });
    // The whole request was refused: the entity, the key or the body is wrong for every batch alike.
    if ([400, 401, 403, 404, 405].includes(answer.status)) {
      throw new ChoreError(`The API refused the import (${answer.status} ${answer.body?.code ?? ''}): ${answer.body?.error ?? ''}`);
    }
    return { batch, readable, answer };
  };
  /** Counts a batch's answer and writes its refused rows, in the file's order. */
  const account = async ({ batch, readable, answer }: Sent) => {
    for (const r of batch.rows.filter((r) => r.error)) await report({ row: r.row, error: r.error! });
    if (answer && answer.status !== 201) {
      const message = answer.body?.error ?? `HTTP ${answer.status}`;
      for (const r of readable) await report({ row: r.row, error: message, details: answer.body?.details, item: r.csv ?? r.item });
    } else if (answer) {
      const data = answer.body.data;
      const failures: { index: number; error: string; details?: Record<string, string> }[] = data.failures ?? data.errors ?? [];
      const imported: number = data.created ?? data.imported ?? 0;
      summary.imported += imported;
      if (answer.headers.get('idempotent-replayed') === 'true') summary.alreadyImported += imported;
      for (const f of failures) {
        const r = readable[f.index];
        await report({ row: r.row, error: f.error, ...(f.details ? { details: f.details } : {}), item: r.csv ?? r.item });
      }
    }
    summary.rows += batch.rows.length;
    bar.update(summary.rows, { failed: summary.failed });
  };
  // A few batches in flight at once; each is its own request with its own key, so their order
  // does not matter to the API, and the report keeps the file's order.
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  const flush = async (window: Batch[]) => {
    for (const sent of await Promise.all(window.map(post))) await account(sent);
  };

  try {
    let window: Batch[] = [];
    let batch: Batch = { rows: [] };
    for await (const row of rowsOf(file, format)) {
      batch.rows.push(row);
      if (batch.rows.length === BATCH_SIZE) {
        window.push(batch);
        batch = { rows: [] };
        if (window.length === concurrency) {
          await flush(window);
          window = [];
        }
      }
    }
    if (batch.rows.length) window.push(batch);
    if (window.length) await flush(window);
  } finally {
    bar.stop();
    if (errorsOut) {
      errorsOut.end();
      await once(errorsOut, 'close');
    }
  }
  summary.seconds = (Date.now() - started) / 1000;
  if (summary.failed) summary.errorsFile = errorsFile;
  return summary;
}

// ---------- export ----------

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(';');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The export's columns: every field of the entity's OPTIONS schema, or id and the fields asked for (the dashboard's CSV export has the same). */
export function exportColumns(schema: Record<string, unknown>, fields?: string): string[] {
  return fields ? ['id', ...fields.split(',').filter((f) => f && f !== 'id')] : Object.keys(schema);
}

async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

export async function exportEntity(
  target: ApiTarget,
  entity: string,
  options: { filter?: string; sort?: string; fields?: string; format?: Format },
  out: NodeJS.WritableStream,
): Promise<{ rows: number; seconds: number }> {
  const started = Date.now();
  const format = options.format ?? 'csv';
  if (options.filter) {
    try {
      JSON.parse(options.filter);
    } catch {
      throw new ChoreError('--filter must be a JSON object, e.g. \'{"status":"todo"}\'');
    }
  }
  const described = await call(target, 'OPTIONS', `/api/v1/${encodeURIComponent(entity)}`);
  if (described.status !== 200) throw new ChoreError(`Cannot export ${entity}: ${described.body?.error ?? `HTTP ${described.status}`}`);
  const columns = exportColumns(described.body.data.schema as Record<string, unknown>, options.fields);

  const csv = format === 'csv' ? stringify({ header: true, columns }) : undefined;
  const done = csv ? new Promise<void>((resolve, reject) => csv.on('end', resolve).on('error', reject)) : undefined;
  if (csv) csv.pipe(out, { end: false });
  let rows = 0;
  let cursor: string | undefined;
  let bar: ReturnType<typeof progress> | undefined;
  if (format === 'json') await write(out, '[');
  try {
    do {
      const query = new URLSearchParams({ limit: '100' });
      if (options.filter) query.set('filter', options.filter);
      if (options.sort) query.set('sort', options.sort);
      if (options.fields) query.set('fields', columns.join(','));
      if (cursor) query.set('cursor', cursor);
      const page = await call(target, 'GET', `/api/v1/${encodeURIComponent(entity)}?${query}`);
      if (page.status !== 200) throw new ChoreError(`The API refused the export (${page.status} ${page.body?.code ?? ''}): ${page.body?.error ?? ''}`);
      bar ??= progress(`export ${entity}`, page.body.pagination.total, {
        failures: false,
        interrupted: (done) => `export ${entity} interrupted after ${done} of ${page.body.pagination.total} rows: the output is incomplete. Run the command again for the whole export.`,
      });
      for (const record of page.body.data as Record<string, unknown>[]) {
        if (csv) {
          if (!csv.write(columns.map((c) => cell(record[c])))) await once(csv, 'drain');
        } else if (format === 'ndjson') await write(out, `${JSON.stringify(record)}\n`);
        else await write(out, `${rows ? ',' : ''}\n${JSON.stringify(record)}`);
        rows += 1;
      }
      bar.update(rows);
      cursor = page.body.pagination.nextCursor ?? undefined;
    } while (cursor);
  } finally {
    bar?.stop();
  }
  if (csv) {
    csv.end();
    await done;
  }
  if (format === 'json') await write(out, '\n]\n');
  return { rows, seconds: (Date.now() - started) / 1000 };
}

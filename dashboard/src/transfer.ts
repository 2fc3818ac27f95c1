/**
 * Import and export of records: rows of a CSV or JSON file as the items an import sends (typed by
 * the entity's description), and records as CSV or NDJSON. Pure, so unit tests check them.
 */
import Papa from 'papaparse';
import type { EntityDescription } from './form.js';

export const IMPORT_BATCH = 100;
/** Records per LIST request of an export: SPEC.md's largest page, so the fewest requests of the session's hourly budget. */
export const EXPORT_PAGE = 100;

/** The rows of a file: CSV with a header row, a JSON array of objects, or NDJSON. */
export function parseRows(name: string, text: string): { rows: Record<string, unknown>[]; error?: string } {
  const trimmed = text.trim();
  if (/\.csv$/i.test(name) || (!trimmed.startsWith('[') && !trimmed.startsWith('{'))) {
    const parsed = Papa.parse<Record<string, string>>(trimmed, { header: true, skipEmptyLines: true });
    const error = parsed.errors[0];
    return { rows: parsed.data, ...(error ? { error: `row ${(error.row ?? 0) + 1}: ${error.message}` } : {}) };
  }
  try {
    if (trimmed.startsWith('[')) {
      const value: unknown = JSON.parse(trimmed);
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'object' || v === null || Array.isArray(v))) return { rows: [], error: 'the JSON must be an array of objects' };
      return { rows: value as Record<string, unknown>[] };
    }
    return { rows: trimmed.split(/\r?\n/).filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>) };
  } catch (e) {
    return { rows: [], error: `not valid JSON: ${(e as Error).message}` };
  }
}

/**
 * A row as an import item: CSV text typed by the field's descriptor (numbers, booleans, lists
 * separated by ';'), empty cells left out, generated fields dropped. Anything the server must
 * judge (a bad number, an unknown column) is sent as is, so its per-row error names it.
 */
export function toItem(row: Record<string, unknown>, description: EntityDescription): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(row)) {
    const d = description.schema[key];
    if (d?.generated || d?.primaryKey) continue;
    if (typeof raw !== 'string') {
      item[key] = raw;
      continue;
    }
    if (raw === '') continue;
    if (d?.type === 'number') item[key] = Number.isNaN(Number(raw)) ? raw : Number(raw);
    else if (d?.type === 'boolean') item[key] = raw === 'true' ? true : raw === 'false' ? false : raw;
    else if (d?.type === 'array') item[key] = raw.split(';').map((s) => s.trim()).filter(Boolean);
    else if (key === 'metadata') {
      try {
        item[key] = JSON.parse(raw);
      } catch {
        item[key] = raw;
      }
    } else item[key] = raw;
  }
  return item;
}

export function toCsv(records: Record<string, unknown>[], columns: string[]): string {
  return Papa.unparse({
    fields: columns,
    data: records.map((r) => columns.map((c) => (r[c] === undefined || r[c] === null ? '' : Array.isArray(r[c]) ? (r[c] as unknown[]).join(';') : typeof r[c] === 'object' ? JSON.stringify(r[c]) : String(r[c])))),
  });
}

export function toNdjson(records: Record<string, unknown>[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : '');
}

/**
 * One page of an export as CSV text: the header row with the first page only, every page ending
 * in a line break, so that pages written one after another make one CSV file.
 */
export function csvPage(records: Record<string, unknown>[], columns: string[], first: boolean): string {
  if (!records.length) return first ? `${Papa.unparse([columns])}\r\n` : '';
  const text = toCsv(records, columns);
  return `${first ? text : text.slice(text.indexOf('\r\n') + 2)}\r\n`;
}

/** LIST requests an export of a view of `total` records takes: pages of EXPORT_PAGE, at least one. */
export function exportRequests(total: number): number {
  return Math.max(1, Math.ceil(total / EXPORT_PAGE));
}

/** Import requests for `rows` rows: batches of IMPORT_BATCH. */
export function importRequests(rows: number): number {
  return Math.ceil(rows / IMPORT_BATCH);
}

/** The read capacity units of an `X-Request-Cost` header (`rcu=1.5, wcu=0.0`), 0 when absent. */
export function readUnits(header: string | null): number {
  const match = /rcu=([\d.]+)/.exec(header ?? '');
  return match ? Number(match[1]) : 0;
}

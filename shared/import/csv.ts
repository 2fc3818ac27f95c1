/**
 * CSV for imports (POST /api/v1/import/{entity} with Content-Type text/csv, and the admin CLI):
 * the header row names the fields, each further row is one item. A cell becomes what the JSON
 * import would receive: empty → the field left out; a number field's numeric text → a number;
 * a boolean field's true/false → a boolean; a list (tagIds) → its `;`-separated values. Anything
 * else stays text, so a bad cell meets the same validation (and message) as in JSON.
 */
import { parse } from 'csv-parse/sync';
import { BadRequestError } from '../errors.js';
import { linkKeys, type LoadedEntity } from '../registry/index.js';

export const CSV_TYPE = /^text\/csv\s*(;|$)/i;

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** One CSV row (column → text) as an import item of `entity`. */
export function csvRowToItem(entity: LoadedEntity, row: Record<string, string>): Record<string, unknown> {
  const lists = new Set(linkKeys(entity));
  const item: Record<string, unknown> = {};
  for (const [column, cell] of Object.entries(row)) {
    if (cell === '' || cell === undefined) continue;
    const field = entity.fields[column];
    if (lists.has(column)) item[column] = cell.split(';').map((v) => v.trim()).filter(Boolean);
    else if (field?.type === 'number' && NUMERIC.test(cell.trim())) item[column] = Number(cell.trim());
    else if (field?.type === 'boolean' && /^(true|false)$/i.test(cell.trim())) item[column] = cell.trim().toLowerCase() === 'true';
    else item[column] = cell;
  }
  return item;
}

/** The rows of a CSV text (header row = field names), as import items. */
export function csvItems(entity: LoadedEntity, text: string): Record<string, unknown>[] {
  let rows: Record<string, string>[];
  try {
    rows = parse(text, { columns: true, bom: true, skip_empty_lines: true, relax_column_count: false }) as Record<string, string>[];
  } catch (error) {
    throw new BadRequestError(`The CSV body could not be read: ${(error as Error).message}`, { body: 'malformed CSV' });
  }
  return rows.map((row) => csvRowToItem(entity, row));
}

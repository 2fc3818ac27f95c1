/**
 * The explorer's view (search, sort, filters, page size, cursor) as the page's URL keeps it, and
 * as the LIST request of SPEC.md sends it. Pure, so that a bookmarked URL and the request shown
 * in the panel are the same thing.
 */

/** The filter operators of SPEC.md (LIST "Filter operators"). */
export const OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$contains', '$startsWith', '$endsWith', '$null'] as const;
export type Operator = (typeof OPERATORS)[number];

export const OPERATOR_LABELS: Record<Operator, string> = {
  $eq: 'equals',
  $ne: 'not equal',
  $gt: 'greater than',
  $gte: 'at least',
  $lt: 'less than',
  $lte: 'at most',
  $in: 'one of (comma-separated)',
  $nin: 'none of (comma-separated)',
  $contains: 'contains',
  $startsWith: 'starts with',
  $endsWith: 'ends with',
  $null: 'is empty (true/false)',
};

export interface FilterRow {
  field: string;
  op: Operator;
  value: string;
}

export interface View {
  /** The columns shown, in order ([] : the entity's default columns). */
  columns: string[];
  /** Widths in pixels of the columns the user resized. */
  widths: Record<string, number>;
  search: string;
  sort: string;
  order: 'asc' | 'desc';
  limit: number;
  filters: FilterRow[];
  /** The cursor of the page shown ('' for the first), and those of the pages before it. */
  cursor: string;
  trail: string[];
}

export const PAGE_SIZES = [10, 20, 50, 100];
/** Bounds of a column's width, in pixels. */
export const MIN_WIDTH = 48;
export const MAX_WIDTH = 1200;
const DEFAULT_LIMIT = 20;

export function emptyView(): View {
  return { columns: [], widths: {}, search: '', sort: '', order: 'asc', limit: DEFAULT_LIMIT, filters: [], cursor: '', trail: [] };
}

/** A filter value typed for the field: numbers for number fields, lists for $in/$nin, booleans for $null. */
function typedValue(row: FilterRow, numeric: boolean): unknown {
  const one = (text: string): unknown => {
    const t = text.trim();
    if (numeric && t !== '' && !Number.isNaN(Number(t))) return Number(t);
    if (t === 'true') return true;
    if (t === 'false') return false;
    return t;
  };
  if (row.op === '$in' || row.op === '$nin') return row.value.split(',').map(one);
  if (row.op === '$null') return row.value.trim() !== 'false';
  return one(row.value);
}

/** The filter JSON object of the LIST request; several operators on one field share its object. */
export function filterObject(rows: FilterRow[], numericFields: ReadonlySet<string> = new Set()): Record<string, Record<string, unknown>> | undefined {
  const out: Record<string, Record<string, unknown>> = {};
  for (const row of rows) {
    if (!row.field) continue;
    (out[row.field] ??= {})[row.op] = typedValue(row, numericFields.has(row.field));
  }
  return Object.keys(out).length ? out : undefined;
}

/** Filter rows back from a filter object (a plain value is $eq). Unknown operators are dropped. */
export function filterRows(filter: unknown): FilterRow[] {
  if (!filter || typeof filter !== 'object' || Array.isArray(filter)) return [];
  const rows: FilterRow[] = [];
  const text = (v: unknown): string => (Array.isArray(v) ? v.map(String).join(',') : String(v));
  for (const [field, condition] of Object.entries(filter as Record<string, unknown>)) {
    if (condition && typeof condition === 'object' && !Array.isArray(condition)) {
      for (const [op, value] of Object.entries(condition as Record<string, unknown>)) {
        if ((OPERATORS as readonly string[]).includes(op)) rows.push({ field, op: op as Operator, value: text(value) });
      }
    } else {
      rows.push({ field, op: '$eq', value: text(condition) });
    }
  }
  return rows;
}

/** The view as the query of the page's own URL (after `#/<entity>?`): only what differs from the defaults. */
export function viewToParams(view: View, numericFields?: ReadonlySet<string>): URLSearchParams {
  const p = new URLSearchParams();
  if (view.columns.length) p.set('cols', view.columns.join(','));
  const widths = Object.entries(view.widths).filter(([, w]) => w > 0);
  if (widths.length) p.set('widths', widths.map(([c, w]) => `${c}:${Math.round(w)}`).join(','));
  if (view.search) p.set('search', view.search);
  if (view.sort) {
    p.set('sort', view.sort);
    p.set('order', view.order);
  }
  const filter = filterObject(view.filters, numericFields);
  if (filter) p.set('filter', JSON.stringify(filter));
  if (view.limit !== DEFAULT_LIMIT) p.set('limit', String(view.limit));
  if (view.cursor) p.set('cursor', view.cursor);
  if (view.trail.length) p.set('trail', view.trail.join('~'));
  return p;
}

export function paramsToView(p: URLSearchParams): View {
  let filters: FilterRow[] = [];
  try {
    filters = filterRows(JSON.parse(p.get('filter') ?? 'null'));
  } catch {
    filters = [];
  }
  const limit = Number(p.get('limit'));
  const widths: Record<string, number> = {};
  for (const pair of (p.get('widths') ?? '').split(',')) {
    const [column, width] = pair.split(':');
    if (column && Number(width) >= MIN_WIDTH) widths[column] = Math.min(MAX_WIDTH, Math.round(Number(width)));
  }
  return {
    columns: (p.get('cols') ?? '').split(',').filter(Boolean),
    widths,
    search: p.get('search') ?? '',
    sort: p.get('sort') ?? '',
    order: p.get('order') === 'desc' ? 'desc' : 'asc',
    limit: PAGE_SIZES.includes(limit) ? limit : DEFAULT_LIMIT,
    filters,
    cursor: p.get('cursor') ?? '',
    trail: (p.get('trail') ?? '').split('~').filter(Boolean),
  };
}

/** The LIST request's query parameters for the view (the API's names). */
export function listQuery(view: View, numericFields?: ReadonlySet<string>): Record<string, string> {
  const q: Record<string, string> = { limit: String(view.limit) };
  if (view.search) q.search = view.search;
  if (view.sort) {
    q.sort = view.sort;
    q.order = view.order;
  }
  const filter = filterObject(view.filters, numericFields);
  if (filter) q.filter = JSON.stringify(filter);
  if (view.cursor) q.cursor = view.cursor;
  return q;
}

/**
 * The columns a view shows: its chosen ones that the entity has, in their order, else the
 * entity's own (`all`). A view saved before a field was removed still opens.
 */
export function visibleColumns(view: Pick<View, 'columns'>, all: readonly string[]): string[] {
  const chosen = view.columns.filter((c) => all.includes(c));
  return chosen.length ? chosen : [...all];
}

/** Moves `column` one place earlier (-1) or later (+1) in `order`. */
export function moveColumn(order: readonly string[], column: string, by: -1 | 1): string[] {
  const i = order.indexOf(column);
  const j = i + by;
  if (i < 0 || j < 0 || j >= order.length) return [...order];
  const next = [...order];
  [next[i], next[j]] = [next[j], next[i]];
  return next;
}

/** The same view, as the URL of another page would hold it: the position (cursor) dropped. */
export function firstPage(view: View): View {
  return { ...view, cursor: '', trail: [] };
}

/** How a row changed since its page was read, as the event stream told it. */
export type Mark = 'created' | 'updated' | 'deleted';

/**
 * The total a page shows while changes arrive: the page's total, plus the rows added live, less
 * the rows shown (on the page or added) that were deleted since.
 */
export function liveTotal(total: number, pageIds: readonly string[], added: readonly { id: string }[], marks: ReadonlyMap<string, Mark>): number {
  const shown = new Set(pageIds);
  const extra = added.filter((r) => !shown.has(r.id));
  for (const r of extra) shown.add(r.id);
  let deleted = 0;
  for (const [id, mark] of marks) if (mark === 'deleted' && shown.has(id)) deleted += 1;
  return Math.max(0, total + extra.length - deleted);
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The same request as a curl command line (an API key in place of the browser's session). */
export function curlCommand(origin: string, path: string, query: Record<string, string>): string {
  const qs = new URLSearchParams(query).toString();
  return `curl -H "Authorization: Bearer $API_KEY" ${shellQuote(`${origin}${path}${qs ? `?${qs}` : ''}`)}`;
}

/** The same request through the typed client (packages/client). */
export function clientCall(origin: string, path: string, query: Record<string, string>): string {
  const params = Object.entries(query)
    .map(([k, v]) => `      ${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${k === 'limit' ? v : JSON.stringify(v)},`)
    .join('\n');
  return [
    `import { createClient } from '@entity-record-api/client';`,
    ``,
    `const api = createClient({ baseUrl: ${JSON.stringify(origin)}, apiKey: process.env.API_KEY });`,
    `const { data, error } = await api.GET(${JSON.stringify(path)}, {`,
    `  params: {`,
    `    query: {`,
    params,
    `    },`,
    `  },`,
    `});`,
  ].join('\n');
}

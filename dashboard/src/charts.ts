/**
 * The explorer's charts as data: the aggregate requests of a view (the summary strip's counts
 * per enum value, the records created per day over the last 30 days), each with the view's
 * search and filters, and the series the charts draw from the answers. Pure, so unit tests
 * check it without a browser.
 */
import type { EntityDescription } from './form.js';

/** The days the "records over time" chart shows, today (UTC) the last. */
export const DAYS = 30;
/** The enum fields the summary strip counts (one request groups by at most two fields). */
export const STRIP_FIELDS = 2;
const DAY_MS = 86_400_000;
/** Views of more records than this draw their charts when asked: an aggregate is answered today by reading every record of the view. */
export const AUTO_CHART_RECORDS = 5_000;

export interface AggregateGroup {
  key: Record<string, unknown>;
  count?: number;
}

/** The enum fields the summary strip shows, in the description's order. */
export function stripFields(description: EntityDescription): string[] {
  return Object.entries(description.schema)
    .filter(([, d]) => d.type === 'enum' && Array.isArray(d.values) && d.values.length > 0)
    .map(([name]) => name)
    .slice(0, STRIP_FIELDS);
}

/** The view's filters as an aggregate takes them: its search and its filter, nothing about pages or order. */
export function chartFilters(listQuery: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  if (listQuery.search) out.search = listQuery.search;
  if (listQuery.filter) out.filter = listQuery.filter;
  return out;
}

/** The UTC day (YYYY-MM-DD) `days` before the one of `now`. */
export function dayBefore(now: number, days: number): string {
  return new Date(now - days * DAY_MS).toISOString().slice(0, 10);
}

/** The summary strip's request: a count per value of the strip's fields; none without an enum field. */
export function stripQuery(fields: readonly string[], filters: Readonly<Record<string, string>>): Record<string, string> | undefined {
  if (fields.length === 0) return undefined;
  return { count: '', groupBy: fields.join(','), ...filters };
}

/** The chart's request: a count per UTC day of createdAt, the last DAYS days up to today. */
export function overTimeQuery(filters: Readonly<Record<string, string>>, now: number): Record<string, string> {
  return { count: '', interval: 'day', startDate: dayBefore(now, DAYS - 1), endDate: dayBefore(now, 0), ...filters };
}

export interface Bar {
  label: string;
  count: number;
}

/**
 * The count of each value of `field`, in the order of `values` (a value without records shows 0),
 * summed over the groups of the other field; a group without a value is "(none)" at the end.
 */
export function countsOf(groups: readonly AggregateGroup[], field: string, values: readonly string[]): Bar[] {
  const counts = new Map<string | null, number>(values.map((v) => [v, 0]));
  for (const group of groups) {
    const raw = group.key[field];
    const value = raw === undefined || raw === null ? null : String(raw);
    counts.set(value, (counts.get(value) ?? 0) + (group.count ?? 0));
  }
  const none = counts.get(null);
  counts.delete(null);
  const bars = [...counts].map(([label, count]) => ({ label: label as string, count }));
  return none ? [...bars, { label: '(none)', count: none }] : bars;
}

/** One bar per day of the last DAYS days, oldest first, 0 for a day without records. */
export function dailySeries(groups: readonly AggregateGroup[], now: number, dateField = 'createdAt'): Bar[] {
  const byDay = new Map<string, number>();
  for (const group of groups) {
    const day = group.key[dateField];
    if (typeof day === 'string') byDay.set(day, (byDay.get(day) ?? 0) + (group.count ?? 0));
  }
  return Array.from({ length: DAYS }, (_, i) => {
    const label = dayBefore(now, DAYS - 1 - i);
    return { label, count: byDay.get(label) ?? 0 };
  });
}

/** A bar's share of the largest (0..100, for a width or height in percent); 0 when every count is 0. */
export function share(count: number, bars: readonly Bar[]): number {
  const max = Math.max(0, ...bars.map((b) => b.count));
  return max === 0 ? 0 : Math.round((count / max) * 1000) / 10;
}

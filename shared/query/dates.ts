/**
 * Date bounds (startDate/from, endDate/to, dateField): three forms, UTC unless an offset is given,
 * inclusive. A plain date as the end bound includes that whole day (up to 23:59:59.999Z). On a
 * `date` field (YYYY-MM-DD) the bounds are the UTC days they fall on.
 * Pure.
 */
import { BadRequestError } from '../errors.js';
import type { LoadedEntity } from '../registry/index.js';
import { resolveField, type FieldRef } from './fields.js';

const PLAIN_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** The bound as ISO 8601 UTC (milliseconds), or undefined when the text is not one of the forms. */
export function parseDateBound(text: string, bound: 'start' | 'end'): string | undefined {
  const value = text.trim();
  const plain = PLAIN_DATE.exec(value);
  if (plain) {
    const ms = Date.UTC(Number(plain[1]), Number(plain[2]) - 1, Number(plain[3]));
    const date = new Date(ms);
    if (date.getUTCFullYear() !== Number(plain[1]) || date.getUTCMonth() !== Number(plain[2]) - 1 || date.getUTCDate() !== Number(plain[3])) return undefined;
    return new Date(bound === 'end' ? ms + 86_400_000 - 1 : ms).toISOString();
  }
  if (!DATE_TIME.test(value)) return undefined;
  // No offset: UTC.
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`;
  const ms = Date.parse(withZone);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

export interface DateRange {
  field: FieldRef;
  start?: string;
  end?: string;
}

export function parseDateRange(entity: LoadedEntity, query: Record<string, string>): DateRange | undefined {
  const startText = query.startDate ?? query.from;
  const endText = query.endDate ?? query.to;
  const fieldName = query.dateField;
  const details: Record<string, string> = {};
  let field: FieldRef | undefined;
  if (fieldName !== undefined && fieldName !== '') {
    const resolved = resolveField(entity, fieldName);
    if (!resolved.ok || (resolved.ref.type !== 'datetime' && resolved.ref.type !== 'date')) {
      const names = Object.entries(entity.fields).filter(([, f]) => f.type === 'datetime' || f.type === 'date').map(([n]) => `, ${n}`).join('');
      details.dateField = `must name a date-time or date field (createdAt, updatedAt${names})`;
    } else field = resolved.ref;
  }
  const start = startText ? parseDateBound(startText, 'start') : undefined;
  const end = endText ? parseDateBound(endText, 'end') : undefined;
  const forms = 'must be YYYY-MM-DD, or ISO 8601 date-time with Z or an offset';
  if (startText && !start) details[query.startDate !== undefined ? 'startDate' : 'from'] = forms;
  if (endText && !end) details[query.endDate !== undefined ? 'endDate' : 'to'] = forms;
  if (Object.keys(details).length) throw new BadRequestError('Invalid date range', details);
  if (!start && !end) return undefined;
  field ??= (resolveField(entity, 'createdAt') as { ref: FieldRef }).ref;
  // A date field holds YYYY-MM-DD: the bounds become the (UTC) days they fall on, both inclusive.
  if (field.type === 'date') return { field, start: start?.slice(0, 10), end: end?.slice(0, 10) };
  return { field, start, end };
}

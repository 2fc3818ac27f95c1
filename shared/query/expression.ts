/**
 * Conditions → a DynamoDB FilterExpression (pure, unit-tested). Everything
 * DynamoDB can evaluate exactly is pushed down, so only matching items cross the wire; what it
 * cannot ($contains on a field is case-insensitive, $endsWith has no DynamoDB function, an empty
 * $in) is left to the in-memory check that runs on every item read anyway — and so is whatever
 * would take the expression over DynamoDB's limits (4 KB, 300 operators, paths nested over 32
 * levels).
 *
 * Search words are not pushed down: listing copies hold no folded search text, so the words are
 * matched in memory (shared/entities/list.ts).
 */
import type { Condition } from './filter.js';

/** DynamoDB refuses expressions over 4 KB or 300 operators, and document paths nested over 32 levels. */
export const MAX_EXPRESSION_CHARS = 4000;
export const MAX_OPERATORS = 300;
export const MAX_PATH_DEPTH = 32;

/** Operators and functions of a clause as DynamoDB counts them, plus the AND joining it. */
function operatorsIn(clause: string): number {
  return 1 + (clause.match(/\b(?:AND|OR|NOT|IN|BETWEEN)\b|<>|<=|>=|=|<|>|\b[a-z_]+\(/g)?.length ?? 0);
}

export interface FilterExpression {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

export interface BuiltFilter {
  /** Undefined when nothing can be pushed down. */
  pushed?: FilterExpression;
  /** Conditions DynamoDB does not evaluate (checked in memory). */
  residual: Condition[];
}

export function buildFilterExpression(conditions: readonly Condition[]): BuiltFilter {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const nameIds = new Map<string, string>();
  let valueCount = 0;
  const name = (part: string): string => {
    let id = nameIds.get(part);
    if (!id) {
      id = `#f${nameIds.size}`;
      nameIds.set(part, id);
      names[id] = part;
    }
    return id;
  };
  const path = (parts: readonly string[]): string => parts.map(name).join('.');
  const value = (v: unknown): string => {
    const id = `:v${valueCount++}`;
    values[id] = v;
    return id;
  };

  const clauses: string[] = [];
  const residual: Condition[] = [];
  let length = 0;
  let operators = 0;
  /**
   * Keeps a clause only while the expression stays within DynamoDB's size limit; otherwise the
   * names and values it registered are dropped (an unused name is refused) and the caller's
   * in-memory check, which runs on every item read, does the work.
   */
  const fits = (start: { names: number; values: number }): boolean => {
    const clause = clauses[clauses.length - 1];
    const cost = operatorsIn(clause);
    if (length + clause.length + 5 <= MAX_EXPRESSION_CHARS && operators + cost <= MAX_OPERATORS) {
      length += clause.length + 5;
      operators += cost;
      return true;
    }
    clauses.pop();
    for (const [part, id] of [...nameIds].slice(start.names)) {
      nameIds.delete(part);
      delete names[id];
    }
    for (let i = start.values; i < valueCount; i++) delete values[`:v${i}`];
    valueCount = start.values;
    return false;
  };
  for (const c of conditions) {
    // Residual conditions must not register names: DynamoDB refuses unused ExpressionAttributeNames.
    if (c.op === '$contains' || c.op === '$endsWith' || (c.op === '$in' && (c.value as unknown[]).length === 0) || c.field.path.length > MAX_PATH_DEPTH) {
      residual.push(c);
      continue;
    }
    if (c.op === '$nin' && (c.value as unknown[]).length === 0) continue;
    const start = { names: nameIds.size, values: valueCount };
    const a = path(c.field.path);
    switch (c.op) {
      case '$eq':
        clauses.push(`${a} = ${value(c.value)}`);
        break;
      case '$ne':
        clauses.push(`(attribute_not_exists(${a}) OR ${a} <> ${value(c.value)})`);
        break;
      case '$gt':
        clauses.push(`${a} > ${value(c.value)}`);
        break;
      case '$gte':
        clauses.push(`${a} >= ${value(c.value)}`);
        break;
      case '$lt':
        clauses.push(`${a} < ${value(c.value)}`);
        break;
      case '$lte':
        clauses.push(`${a} <= ${value(c.value)}`);
        break;
      case '$in':
        clauses.push(`${a} IN (${(c.value as unknown[]).map(value).join(', ')})`);
        break;
      case '$nin':
        clauses.push(`(attribute_not_exists(${a}) OR NOT (${a} IN (${(c.value as unknown[]).map(value).join(', ')})))`);
        break;
      case '$startsWith':
        clauses.push(`begins_with(${a}, ${value(c.value)})`);
        break;
      case '$null':
        clauses.push(
          c.value
            ? `(attribute_not_exists(${a}) OR attribute_type(${a}, ${value('NULL')}))`
            : `(attribute_exists(${a}) AND NOT attribute_type(${a}, ${value('NULL')}))`,
        );
        break;
    }
    if (!fits(start)) residual.push(c);
  }
  if (clauses.length === 0) return { residual };
  return { pushed: { expression: clauses.join(' AND '), names, values }, residual };
}

/**
 * Conditions and search words → a DynamoDB FilterExpression (pure, unit-tested). Everything
 * DynamoDB can evaluate exactly is pushed down, so only matching items cross the wire; what it
 * cannot ($contains on a field is case-insensitive, $endsWith has no DynamoDB function, an empty
 * $in) is left to the in-memory check that runs on every item read anyway.
 *
 * Search uses the lower-cased search text stored on every listing copy (attribute `_search`,
 * written by shared/data/records-keys.ts): `contains(_search, :word)` per word.
 */
import type { Condition } from './filter.js';

export const SEARCH_ATTRIBUTE = '_search';

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

export function buildFilterExpression(conditions: readonly Condition[], words: readonly string[] = []): BuiltFilter {
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
  for (const c of conditions) {
    // Residual conditions must not register names: DynamoDB refuses unused ExpressionAttributeNames.
    if (c.op === '$contains' || c.op === '$endsWith' || (c.op === '$in' && (c.value as unknown[]).length === 0)) {
      residual.push(c);
      continue;
    }
    if (c.op === '$nin' && (c.value as unknown[]).length === 0) continue;
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
  }
  for (const w of words) clauses.push(`contains(${name(SEARCH_ATTRIBUTE)}, ${value(w)})`);
  if (clauses.length === 0) return { residual };
  return { pushed: { expression: clauses.join(' AND '), names, values }, residual };
}

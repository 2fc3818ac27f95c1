import { describe, expect, it } from 'vitest';
import { buildFilterExpression } from '../../../shared/query/expression.js';
import { parseFilter } from '../../../shared/query/filter.js';
import { tasks } from './support.js';

const build = (filter: object) => buildFilterExpression(parseFilter(tasks, JSON.stringify(filter)));

describe('buildFilterExpression', () => {
  it('pushes nothing for no conditions', () => {
    expect(build({})).toEqual({ residual: [] });
  });

  it('builds comparisons on data.<field> with placeholders for every name and value', () => {
    const { pushed, residual } = build({ status: 'todo', estimate: { $gte: 2 } });

    expect(pushed).toEqual({
      expression: '#f0.#f1 = :v0 AND #f0.#f2 >= :v1',
      names: { '#f0': 'data', '#f1': 'status', '#f2': 'estimate' },
      values: { ':v0': 'todo', ':v1': 2 },
    });
    expect(residual).toEqual([]);
  });

  it('treats a missing attribute as unequal for $ne and $nin', () => {
    expect(build({ status: { $ne: 'todo' } }).pushed?.expression).toBe('(attribute_not_exists(#f0.#f1) OR #f0.#f1 <> :v0)');
    expect(build({ status: { $nin: ['todo', 'completed'] } }).pushed?.expression).toBe('(attribute_not_exists(#f0.#f1) OR NOT (#f0.#f1 IN (:v0, :v1)))');
  });

  it('builds IN, begins_with and $null', () => {
    const { pushed } = build({ status: { $in: ['todo'] }, title: { $startsWith: 'Wr' }, assigneeId: { $null: true } });

    expect(pushed?.expression).toBe('#f0.#f1 IN (:v0) AND begins_with(#f0.#f2, :v1) AND (attribute_not_exists(#f0.#f3) OR attribute_type(#f0.#f3, :v2))');
    expect(pushed?.values[':v2']).toBe('NULL');
  });

  it('leaves $contains, $endsWith and an empty $in to the in-memory check', () => {
    const { pushed, residual } = build({ title: { $contains: 'x', $endsWith: 'y' }, status: { $in: [] } });

    expect(pushed).toBeUndefined();
    expect(residual.map((c) => c.op)).toEqual(['$contains', '$endsWith', '$in']);
  });

  it('paths into metadata', () => {
    expect(build({ 'metadata.workflow.stage': 'review' }).pushed).toMatchObject({ expression: '#f0.#f1.#f2 = :v0', names: { '#f0': 'metadata', '#f1': 'workflow', '#f2': 'stage' } });
  });
});

describe('buildFilterExpression names', () => {
  it('registers no attribute name for what stays in memory (DynamoDB refuses unused names)', () => {
    const { pushed } = build({ priority: { $ne: 'medium' }, title: { $contains: 'a' } });

    expect(pushed?.names).toEqual({ '#f0': 'data', '#f1': 'priority' });
  });
});

describe('buildFilterExpression limits', () => {
  it('stays within 300 operators and 4 KB, leaving the rest to the in-memory check', () => {
    const many = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`metadata.k${i}`, `w${i}`]));
    const { pushed, residual } = build({ title: { $nin: Array.from({ length: 100 }, (_, i) => `t${i}`) }, ...many });
    const operators = pushed!.expression.match(/\b(?:AND|OR|NOT|IN)\b|=|\b[a-z_]+\(/g)!.length;

    expect(operators).toBeLessThanOrEqual(300);
    expect(pushed!.expression.length).toBeLessThanOrEqual(4000);
    expect(residual.length).toBeGreaterThan(0);
    // Every placeholder used is defined, and every defined one is used.
    const used = new Set(pushed!.expression.match(/[#:][fv]\d+/g));
    expect(new Set([...Object.keys(pushed!.names), ...Object.keys(pushed!.values)])).toEqual(used);
  });

  it('leaves a metadata path nested over 32 levels to the in-memory check', () => {
    const { pushed, residual } = build({ [`metadata.${Array(40).fill('a').join('.')}`]: 'x', status: 'todo' });

    expect(pushed?.expression).toBe('#f0.#f1 = :v0');
    expect(residual).toHaveLength(1);
  });
});

import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { measure, operationOf } from '../../../shared/graphql/limits.js';

const connections = new Set(['tasks', 'comments']);

function cost(query: string, variables: Record<string, unknown> = {}) {
  const document = parse(query);
  return measure(document, operationOf(document)!, variables, connections, new Set(['tasksAggregate']));
}

describe('query cost', () => {
  it('measures depth as the longest chain of nested fields, fragments expanded, introspection left out', () => {
    expect(cost('{ tasks { edges { node { assignee { name } } } } }').depth).toBe(5);
    expect(cost('query { ...Q } fragment Q on Query { tasks { edges { ... on TaskEdge { node { id } } } } }').depth).toBe(4);
    expect(cost('{ __schema { types { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } } }').depth).toBe(0);
  });

  it('multiplies what is under a connection by its limit (default 20, at most 100), from variables too', () => {
    expect(cost('{ tasks { edges { node { id title } } } }').complexity).toBe(1 + 20 * 4);
    expect(cost('{ tasks(limit: 5) { edges { node { id } } } }').complexity).toBe(1 + 5 * 3);
    expect(cost('query($n: Int) { tasks(limit: $n) { totalCount } }', { n: 1000 }).complexity).toBe(1 + 100);
    expect(cost('{ a: tasks(limit: 100) { totalCount } b: tasks(limit: 100) { totalCount } }').complexity).toBe(202);
  });

  it('weighs what is under an aggregate as a connection of 100 records, so a query holds a few at most', () => {
    expect(cost('{ tasksAggregate(groupBy: ["status"]) { groups { key { status } count } } }').complexity).toBe(1 + 100 * 4);
    expect(cost('{ a: tasksAggregate { source } b: tasksAggregate { source } }').complexity).toBe(202);
  });

  it('stops at a fragment cycle instead of recursing forever', () => {
    expect(() => cost('query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }')).not.toThrow();
  });
});

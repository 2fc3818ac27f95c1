import { getNamedType, GraphQLEnumType, GraphQLInputObjectType, GraphQLObjectType, parse, validate } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlSchema } from '../../../shared/graphql/schema.js';
import { loadRegistry } from '../../../shared/registry/index.js';

beforeAll(async () => {
  await loadRegistry();
});

function filterField(filter: string, field: string) {
  const type = graphqlSchema().getType(filter) as GraphQLInputObjectType;
  return type.getFields()[field].type;
}

function errorsOf(query: string): string[] {
  return validate(graphqlSchema(), parse(query)).map((e) => e.message);
}

describe('entity filters', () => {
  it("type an enum field by the entity's enum, the one its records show", () => {
    const schema = graphqlSchema();
    const status = filterField('TaskFilter', 'status');

    expect(status).toBe(schema.getType('TaskStatus'));
    expect(filterField('TaskFilter', 'priority')).toBe(schema.getType('TaskPriority'));
    expect(filterField('OrderFilter', 'status')).toBe(schema.getType('OrderStatus'));
    expect((status as GraphQLEnumType).getValues().map((v) => v.value)).toEqual(['todo', 'in_progress', 'completed']);
  });

  it('accept an enum value and refuse a value outside the enum or a string literal', () => {
    expect(errorsOf('{ tasks(filter: {status: todo, priority: high}) { totalCount } }')).toEqual([]);
    expect(errorsOf('query($s: TaskStatus) { tasks(filter: {status: $s}) { totalCount } }')).toEqual([]);

    expect(errorsOf('{ tasks(filter: {status: done}) { totalCount } }')).toEqual([expect.stringContaining('Value "done" does not exist in "TaskStatus" enum')]);
    expect(errorsOf('{ tasks(filter: {status: "todo"}) { totalCount } }')).toEqual([expect.stringContaining('Enum "TaskStatus" cannot represent non-enum value: "todo"')]);
  });

  it('keep the scalar of every other field', () => {
    expect(getNamedType(filterField('TaskFilter', 'title')).name).toBe('String');
    expect(getNamedType(filterField('ProductFilter', 'price')).name).toBe('Float');
    expect(getNamedType(filterField('TaskFilter', 'search')).name).toBe('String');
  });
});

describe('entity aggregates', () => {
  it('type the key by the groupable fields (enums as the entity’s enums) and sum by the number fields', () => {
    const schema = graphqlSchema();
    const key = (schema.getType('OrderAggregateKey') as GraphQLObjectType).getFields();
    const sum = (schema.getType('OrderAggregateNumbers') as GraphQLObjectType).getFields();

    expect(Object.keys(key)).toEqual(['customerId', 'status', 'createdAt', 'updatedAt']);
    expect(key.status.type).toBe(schema.getType('OrderStatus'));
    expect(Object.keys(sum)).toEqual(['total']);
  });

  it('leave out sum and avg for an entity without number fields', () => {
    const group = (graphqlSchema().getType('TaskAggregateGroup') as GraphQLObjectType).getFields();

    expect(Object.keys(group)).toEqual(['key', 'count', 'min', 'max']);
  });

  it('accept the functions, groupBy, interval and LIST’s filter; refuse an unknown interval', () => {
    expect(errorsOf('{ ordersAggregate(sum: ["total"], groupBy: ["status"], interval: day, filter: {status: paid}, startDate: "2024-01-01") { groups { key { status createdAt } count sum { total } } source } }')).toEqual([]);
    expect(errorsOf('{ ordersAggregate(interval: year) { source } }')).toEqual([expect.stringContaining('"year" does not exist in "AggregateInterval"')]);
  });
});

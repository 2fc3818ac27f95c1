/**
 * The LIST cost figures of issue 5 at the 1,000 size, checked in CI: the bench's own measurement
 * (bench/list-costs.ts) run in this process against the suite's DynamoDB Local.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { ListCost } from '../../bench/list-costs.js';
import { COUNTER_SHARDS } from '../../shared/data/counters.js';

let costs: Map<string, ListCost>;

beforeAll(async () => {
  process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
  const { measureListCosts, seedTasks } = await import('../../bench/list-costs.js');
  const seeded = await seedTasks(1000);
  costs = new Map((await measureListCosts(seeded)).map((c) => [c.shape, c]));
}, 120_000);

describe('LIST cost at 1,000 tasks in one partition', () => {
  it('default order, page 1: at most 22 copies (the page, one to tell whether more follow, one in the room left for an older counter) and the counter shards, ONE request', () => {
    const c = costs.get('default order, page 1')!;

    expect(c.itemsRead).toBeLessThanOrEqual(22 + COUNTER_SHARDS);
    expect(c.requests).toBe(1);
    expect([c.returned, c.total]).toEqual([20, 1000]);
  });

  it('page 5: no more than the entries before it (one more in the room left for an older counter), the page, one more and the counter shards', () => {
    const c = costs.get('default order, page 5')!;

    expect(c.itemsRead).toBeLessThanOrEqual(81 + 20 + 1 + COUNTER_SHARDS);
    expect(c.returned).toBe(20);
  });

  it('cursor page 50: at most the page, one more and the counter shards', () => {
    const c = costs.get('cursor, page 50')!;

    expect(c.itemsRead).toBeLessThanOrEqual(21 + COUNTER_SHARDS);
    expect([c.returned, c.total]).toEqual([20, 1000]);
  });

  it("equality on an indexed field: at most 22 copies and the base partition's counter shards (which count status)", () => {
    const c = costs.get('equality on an indexed field (status=todo)')!;

    expect(c.itemsRead).toBeLessThanOrEqual(22 + COUNTER_SHARDS);
    expect([c.returned, c.total]).toEqual([20, 334]);
  });

  it('reports the O(partition) shapes with exact totals', () => {
    expect(costs.get('equality on a non-indexed field (title=…)')!.total).toBe(1);
    expect(costs.get('search (one word)')!.total).toBe(100);
    expect(costs.get('sort by a non-indexed field (title)')!.itemsRead).toBe(1000);
    expect(costs.get('two indexed equalities (status=todo&priority=high)')!.itemsRead).toBeLessThanOrEqual(334 + 2 + COUNTER_SHARDS);
  });
});

/**
 * The bench's read-and-delete drain (bench/drain.ts) at a smaller count, through HTTP on the
 * suite's runtime: a worker reading a page, deleting it and following nextCursor, while records
 * are inserted, loses nothing and sees nothing twice, in the default order, sorted, filtered and
 * searched, with bulk and single deletes. `BENCH_ONLY=drain npm run bench` runs 1,000 per order.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { drain, DRAIN_ORDERS, type DeleteMode } from '../../bench/drain.js';
import { baseUrl } from '../support/http.js';
import { newTenant, newUser, type TestTenant } from '../support/identity.js';
import { keyOf } from '../functions/entities/support.js';

const COUNT = 80;
const byName = (name: string) => DRAIN_ORDERS.find((o) => o.name.startsWith(name))!;
const cases: [string, DeleteMode][] = [
  ['default', 'bulk'],
  ['default', 'single'],
  ['filter priority $ne high, sort=title', 'bulk'],
  ['search=alpha, sort=title desc', 'single'],
];

let tenant: TestTenant;

beforeAll(async () => {
  tenant = await newTenant();
});

describe(`read-and-delete drains of ${COUNT} tasks by cursor`, () => {
  it.each(cases)('lose nothing and repeat nothing: %s, %s deletes', { timeout: 180_000 }, async (name, mode) => {
    const apiKey = await keyOf((await newUser(tenant.admin.cookie)).cookie);

    const result = await drain({ baseUrl: baseUrl(), apiKey, order: byName(name), count: COUNT, mode, limit: 20 });

    expect(result.expected).toBeGreaterThan(15);
    expect(result).toMatchObject({ lost: 0, duplicates: 0, unexpected: 0 });
    expect(result.pages).toBeGreaterThanOrEqual(Math.ceil(result.expected / 20));
  });
});

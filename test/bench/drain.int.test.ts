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
const cases: [string, DeleteMode, boolean][] = [
  ['default', 'bulk', false],
  ['default', 'single', false],
  ['filter priority $ne high, sort=title', 'bulk', false],
  ['search=alpha, sort=title desc', 'single', false],
  // Every other task over 1 KB (partial listing copies, their records fetched by every page).
  ['default', 'bulk', true],
  ['search=alpha, sort=title desc', 'bulk', true],
];

let tenant: TestTenant;

beforeAll(async () => {
  tenant = await newTenant();
});

describe(`read-and-delete drains of ${COUNT} tasks by cursor`, () => {
  it.each(cases)('lose nothing and repeat nothing: %s, %s deletes, long descriptions: %s', { timeout: 180_000 }, async (name, mode, long) => {
    const apiKey = await keyOf((await newUser(tenant.admin.cookie)).cookie);

    const result = await drain({ baseUrl: baseUrl(), apiKey, order: byName(name), count: COUNT, mode, limit: 20, long });

    expect(result.expected).toBeGreaterThan(15);
    expect(result).toMatchObject({ lost: 0, duplicates: 0, unexpected: 0 });
    expect(result.pages).toBeGreaterThanOrEqual(Math.ceil(result.expected / 20));
  });
});

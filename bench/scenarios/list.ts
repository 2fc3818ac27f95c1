/**
 * LIST cost (issue 5): items read and read capacity per LIST shape at 1,000 and 10,000 tasks in one
 * partition (BENCH_LIST_SIZES=1000,10000,100000 adds the 100,000 case; it takes minutes to seed).
 * See bench/list-costs.ts for how it seeds and counts.
 */
import { measureListCosts, seedTasks } from '../list-costs.js';
import type { BenchContext, BenchRow } from '../types.js';

export const order = 40;

export async function run(context: BenchContext): Promise<BenchRow[]> {
  await context.local();
  const sizes = (process.env.BENCH_LIST_SIZES ?? '1000,10000')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const seeded = await seedTasks(size);
    console.log(`  seeded ${size} tasks in ${seeded.seconds.toFixed(1)} s`);
    for (const cost of await measureListCosts(seeded)) {
      const scenario = `list: ${cost.shape} @ ${size.toLocaleString('en-US')}`;
      rows.push({
        scenario,
        metric: 'items read',
        value: cost.itemsRead,
        unit: 'items',
        target: cost.targetText,
        pass: cost.pass,
        note: `${cost.requests} DynamoDB requests, ${cost.capacity} RCU consumed; returned ${cost.returned}, total ${cost.total}; ${cost.note}`,
      });
    }
  }
  return rows;
}

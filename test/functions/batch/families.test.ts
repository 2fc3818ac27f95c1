import { describe, expect, it } from 'vitest';
import { NOT_BATCHABLE, batchableFamilies, isBatchable } from '../../../functions/batch/families.js';
import { FAMILIES } from '../../../shared/core-routes.js';
import { families } from '../../../shared/routes.js';

describe('batch families', () => {
  it('covers every family of the route table, either dispatchable or excluded with a reason', () => {
    for (const family of families) {
      expect(isBatchable(family) || NOT_BATCHABLE[family] !== undefined, `family '${family}' is neither in functions/batch/families.ts loaders nor NOT_BATCHABLE`).toBe(true);
    }
  });

  it('never dispatches to the batch family itself', () => {
    expect(isBatchable('batch')).toBe(false);
    expect(batchableFamilies()).not.toContain('batch');
  });
});

describe('batch families and their declarations', () => {
  it('loads exactly the families declared batchable (FAMILIES of shared/core-routes.ts)', () => {
    const declared = Object.entries(FAMILIES).filter(([, d]) => d.batch === true).map(([f]) => f).sort();

    expect([...batchableFamilies()].sort()).toEqual(declared);
  });
});

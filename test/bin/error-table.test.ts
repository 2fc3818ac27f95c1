import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_TABLE_PAGE, errorTable, withErrorTable } from '../../bin/error-table.js';
import { ERROR_CATALOGUE } from '../../shared/errors.js';

describe('the error table of the docs', () => {
  it('is up to date with the catalogue (run `npm run errors:docs` after changing shared/errors.ts)', () => {
    const page = readFileSync(ERROR_TABLE_PAGE, 'utf8');

    expect(withErrorTable(page)).toBe(page);
  });

  it('has one row per code of the catalogue', () => {
    const rows = errorTable().split('\n').slice(2);

    expect(rows).toHaveLength(Object.keys(ERROR_CATALOGUE).length);
    expect(rows).toContain(`| 429 | \`TOO_MANY_STREAMS\` | yes | ${ERROR_CATALOGUE.TOO_MANY_STREAMS.description} |`);
  });
});

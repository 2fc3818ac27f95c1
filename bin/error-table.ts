/**
 * `npm run errors:docs`: writes the table of error codes in docs/api-conventions.md from the
 * catalogue (shared/errors.ts), between its two markers. A unit test fails while the page is out
 * of date with the catalogue.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERROR_CATALOGUE, type CatalogueEntry } from '../shared/errors.js';

export const ERROR_TABLE_PAGE = fileURLToPath(new URL('../docs/api-conventions.md', import.meta.url));
export const START = '<!-- error-table: generated from shared/errors.ts by `npm run errors:docs` -->';
export const END = '<!-- error-table: end -->';

/** The catalogue as a Markdown table, by status then in catalogue order. */
export function errorTable(): string {
  const rows = (Object.entries(ERROR_CATALOGUE) as [string, CatalogueEntry][])
    .map(([code, entry], order) => ({ code, entry, order }))
    .sort((a, b) => a.entry.status - b.entry.status || a.order - b.order)
    .map(({ code, entry }) => `| ${entry.status} | \`${code}\`${entry.surface === 'graphql' ? ' (GraphQL)' : ''} | ${entry.retry ? 'yes' : 'no'} | ${entry.description.replaceAll('|', '\\|')} |`);
  return ['| Status | Code | Retry helps | When |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** `page` with the table between its markers replaced by the catalogue's. */
export function withErrorTable(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${ERROR_TABLE_PAGE} has no error-table markers`);
  return `${page.slice(0, start + START.length)}\n${errorTable()}\n${page.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(ERROR_TABLE_PAGE, withErrorTable(readFileSync(ERROR_TABLE_PAGE, 'utf8')));
  console.log(`wrote the error table of ${ERROR_TABLE_PAGE}`);
}

/**
 * The import area's front door: bulk imports of records and tasks (JSON, or CSV turned into it),
 * with the seed that makes a retried import write the same ids.
 */
export { CSV_TYPE, csvItems } from './csv.js';
export type { IdSeed } from './ids.js';
export { importRecords, importTasks, type ImportInput } from './service.js';

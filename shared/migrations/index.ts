/**
 * The migrations area's front door: the layout loader (live-layouts.ts), which the services that
 * read and write records call once per request, at their edge, for the layout they pass down. The
 * states themselves, their preparation, the runner and the status report are the migration job's
 * and the migrations family's (functions/migration-job/, functions/migrations/).
 */
export { loadLayouts, type LiveLayouts } from './live-layouts.js';

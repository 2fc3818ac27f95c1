/**
 * The migrations area's front door: what the services that read and write records call before
 * they serve an entity (its layout state loaded). The runner, the status report and the states
 * themselves are the migration job's and the migrations family's (functions/migrations/).
 */
export { ensureLayouts } from './state.js';

/**
 * The entities area's narrow entry: its rules without the service (access, how a record is shown,
 * reference checks, preconditions, the metadata sources' cache, a bulk call's operation). For areas whose bundles carry no
 * entity service (auth, import, stream): the front door (index.ts) would bring the listing and
 * its query planner into their chunks.
 */
export { canSee, isAdmin, requireCaller, requireOperation, requirePermission } from './access.js';
export { invalidateMetadataSources } from './metadata.js';
export { startOperation, type Operation } from './operation.js';
export { preconditionsOf, preconditionsOfValue, type Preconditions } from './preconditions.js';
export { present, type PublicRecord } from './present.js';
export { referenceChecks, referenceProblem, referenceReads, relatedKeys } from './references.js';

/**
 * The auth area's front door: what other areas use of it. The rate limit records an API key's
 * use; the route declarations take the auth bodies' schemas (body-schemas.ts is also a narrow
 * entry: every family's cold start loads the route declarations, and the front door would bring
 * the key and session code, node:crypto and the SDK with them). Sessions, users, keys and the
 * bootstrap are the auth and keys families' own (functions/auth/, functions/keys/); the stack
 * loads sessions and keys on first use with import().
 */
export { recordApiKeyUse } from './api-keys.js';
export { authBodySchemas } from './body-schemas.js';

/**
 * The keys family's routes: API keys under /api/v1/keys (bare scopes read/write/delete) and
 * /api/v1/api-keys (entity:action, entity:*, `*` for admins), session only: a key alone gets 403.
 * The bodies (shared/auth/body-schemas.ts) are checked by the middleware stack.
 */
import { keyBodySchemas } from '../auth/body-schemas.js';
import type { QueryParameter, RouteDoc, RouteDocs } from '../route-types.js';
import { BODY, PAGE_QUERY, STRING, V1, familyRoutes } from './declare.js';

const KEY_LIST_QUERY: readonly QueryParameter[] = [
  { name: 'all', description: 'Admins: every key of the tenant.', schema: { type: 'boolean' } },
  { name: 'userId', description: 'Admins: the keys of this user.', schema: STRING },
];

const listed: RouteDoc = ({ json, envelopeOf, ref }) => ({
  tag: 'API keys',
  responses: { 200: json(envelopeOf({ type: 'array', items: ref('ApiKey') }), 'Keys, never the full key.') },
  errors: [400],
});
const created = (example: unknown): RouteDoc => ({ json, envelopeOf, ref }) => ({
  tag: 'API keys',
  requestBody: { example },
  responses: { 201: json(envelopeOf(ref('CreatedApiKey'), { warning: true }), 'The key; `key` is shown this once.') },
  errors: [400, 422],
});
const revoked: RouteDoc = ({ message }) => ({ tag: 'API keys', responses: { 200: message('Revoked at once.') }, errors: [404] });

export const keysRoutes = /* @__PURE__ */ familyRoutes('keys', [
  { method: 'GET', path: `${V1}/keys`, operation: 'listKeys', auth: 'session', errors: ['INVALID_REQUEST', 'FORBIDDEN'], summary: "The caller's API keys", query: KEY_LIST_QUERY, response: 'ApiKey' },
  {
    method: 'POST',
    path: `${V1}/keys`,
    operation: 'createKey',
    auth: 'session',
    errors: [...BODY],
    summary: 'Create an API key (bare scopes)',
    body: keyBodySchemas.createKey,
    response: 'CreatedApiKey',
  },
  { method: 'DELETE', path: `${V1}/keys/{keyId}`, operation: 'revokeKey', auth: 'session', errors: ['NOT_FOUND'], summary: 'Revoke an API key' },
  { method: 'GET', path: `${V1}/api-keys`, operation: 'listApiKeys', auth: 'session', errors: ['INVALID_REQUEST', 'FORBIDDEN'], summary: "The caller's API keys", query: KEY_LIST_QUERY, response: 'ApiKey' },
  {
    method: 'POST',
    path: `${V1}/api-keys`,
    operation: 'createApiKey',
    auth: 'session',
    errors: [...BODY],
    summary: 'Create an API key (entity scopes)',
    body: keyBodySchemas.createApiKey,
    response: 'CreatedApiKey',
  },
  {
    method: 'GET',
    path: `${V1}/api-keys/{id}`,
    operation: 'getApiKey',
    auth: 'session',
    errors: ['NOT_FOUND'],
    summary: 'An API key',
    response: 'ApiKey',
  },
  {
    method: 'PATCH',
    path: `${V1}/api-keys/{id}`,
    operation: 'updateApiKey',
    auth: 'session',
    errors: [...BODY, 'NOT_FOUND'],
    summary: 'Change an API key',
    body: keyBodySchemas.updateApiKey,
    response: 'ApiKey',
  },
  { method: 'DELETE', path: `${V1}/api-keys/{id}`, operation: 'revokeApiKey', auth: 'session', errors: ['NOT_FOUND'], summary: 'Revoke an API key' },
  {
    method: 'GET',
    path: `${V1}/api-keys/{id}/audit`,
    operation: 'listApiKeyAudit',
    auth: 'session',
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
    summary: 'Audit log of an API key',
    query: PAGE_QUERY,
    response: 'AuditEntry',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function keysDocs(): RouteDocs<(typeof keysRoutes)[number]> {
  return {
    listKeys: listed,
    createKey: created({ name: 'CI', scopes: ['read', 'write'] }),
    revokeKey: revoked,
    listApiKeys: listed,
    createApiKey: created({ name: 'Reporting', scopes: ['tasks:read'] }),
    getApiKey: ({ json, envelopeOf, ref }) => ({ tag: 'API keys', responses: { 200: json(envelopeOf(ref('ApiKey')), 'The key record.') }, errors: [404] }),
    updateApiKey: ({ json, envelopeOf, ref }) => ({
      tag: 'API keys',
      description: 'An inactive key answers 401 INVALID_API_KEY until it is active again.',
      requestBody: { example: { status: 'inactive' } },
      responses: { 200: json(envelopeOf(ref('ApiKey')), 'The changed key.') },
      errors: [400, 404, 422],
    }),
    revokeApiKey: revoked,
    listApiKeyAudit: ({ json, envelopeOf, ref }) => ({
      tag: 'API keys',
      description: 'Newest first; `Link: rel="next"` continues.',
      responses: { 200: json(envelopeOf({ type: 'array', items: ref('AuditEntry') }), 'Audit entries.', { headers: ['Link'] }) },
      errors: [400, 404],
    }),
  };
}

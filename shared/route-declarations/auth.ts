/**
 * The auth family's routes: login, logout, refresh, the caller's user, a tenant's users, tenants.
 * Their bodies are the schemas of shared/auth/body-schemas.ts, which the family's services
 * validate (after their own access checks, so a caller without the right gets 403 first).
 */
import { authBodySchemas } from '../auth/body-schemas.js';
import type { QueryParameter, RouteDoc, RouteDocs } from '../route-types.js';
import { BODY, STRING, V1, familyRoutes } from './declare.js';

const session: RouteDoc = ({ json, envelopeOf, ref }) => ({
  tag: 'Auth',
  responses: { 200: json(envelopeOf(ref('Session')), 'The session; its token is in the Set-Cookie `session` cookie (HttpOnly).') },
  errors: [],
});

const SIGN_IN_CALLBACK_QUERY: readonly QueryParameter[] = ['code', 'state', 'iss', 'error', 'error_description'].map((name) => ({
  name,
  description: 'Set by the identity provider (OAuth 2.0 authorization response).',
  schema: STRING,
}));

export const authRoutes = /* @__PURE__ */ familyRoutes('auth', [
  {
    method: 'POST',
    path: `${V1}/auth/login`,
    operation: 'login',
    auth: 'public',
    errors: [...BODY, 'AUTHENTICATION_FAILED'],
    summary: 'Log in',
    body: authBodySchemas.login,
    response: 'Session',
  },
  {
    method: 'POST',
    path: `${V1}/auth/logout`,
    operation: 'logout',
    auth: 'session',
    summary: 'Log out',
  },
  { method: 'POST', path: `${V1}/auth/refresh`, operation: 'refreshSession', auth: 'session', summary: 'Refresh the session', response: 'Session' },
  { method: 'POST', path: `${V1}/auth`, operation: 'refreshSessionShort', auth: 'session', summary: 'Refresh the session (short path)', response: 'Session' },
  // Console sign-in through an identity provider (shared/auth/oidc-console.ts): the browser is redirected.
  { method: 'GET', path: `${V1}/auth/oidc`, operation: 'listSignInProviders', auth: 'public', summary: 'Identity providers the console signs in with', response: 'SignInProvider' },
  {
    method: 'GET',
    path: `${V1}/auth/oidc/callback`,
    operation: 'finishSignIn',
    auth: 'public',
    summary: 'The identity provider sends the browser back here (a redirect to the console, signed in)',
    query: SIGN_IN_CALLBACK_QUERY,
  },
  {
    method: 'GET',
    path: `${V1}/auth/oidc/{provider}`,
    operation: 'startSignIn',
    auth: 'public',
    errors: ['NOT_FOUND'],
    summary: 'Sign in to the console with an identity provider (a redirect to it)',
  },
  {
    method: 'GET',
    path: `${V1}/users/me`,
    operation: 'getMe',
    auth: 'required',
    summary: 'The caller',
    response: 'User',
  },
  // A change to the caller's own user: read-only keys may not (a session has write; keys need `write` or `*`).
  {
    method: 'PATCH',
    path: `${V1}/users/me`,
    operation: 'updateMe',
    auth: 'required',
    scope: 'write',
    errors: [...BODY],
    summary: 'Change the caller',
    body: authBodySchemas.updateMe,
    response: 'User',
  },
  {
    method: 'GET',
    path: `${V1}/users`,
    operation: 'listUsers',
    auth: 'required',
    errors: ['FORBIDDEN'],
    summary: 'Users of the tenant (admin)',
    response: 'User',
  },
  {
    method: 'POST',
    path: `${V1}/users`,
    operation: 'createUser',
    auth: 'required',
    errors: [...BODY, 'FORBIDDEN', 'CONFLICT'],
    summary: 'Add a user to the tenant (admin)',
    body: authBodySchemas.createUser,
    response: 'User',
  },
  {
    method: 'GET',
    path: `${V1}/users/{id}`,
    operation: 'getUser',
    auth: 'required',
    errors: ['FORBIDDEN', 'NOT_FOUND'],
    summary: 'A user of the tenant (admin)',
    response: 'User',
  },
  {
    method: 'PATCH',
    path: `${V1}/users/{id}`,
    operation: 'updateUser',
    auth: 'required',
    errors: [...BODY, 'FORBIDDEN', 'NOT_FOUND'],
    summary: 'Change a user (admin)',
    body: authBodySchemas.updateUser,
    response: 'User',
  },
  {
    method: 'DELETE',
    path: `${V1}/users/{id}`,
    operation: 'deleteUser',
    auth: 'required',
    errors: ['FORBIDDEN', 'NOT_FOUND'],
    summary: 'Remove a user (admin)',
  },
  {
    method: 'GET',
    path: `${V1}/tenants/me`,
    operation: 'getMyTenant',
    auth: 'required',
    summary: "The caller's tenant",
    response: 'Tenant',
  },
  {
    method: 'PATCH',
    path: `${V1}/tenants/me`,
    operation: 'updateMyTenant',
    auth: 'required',
    errors: [...BODY, 'FORBIDDEN'],
    summary: 'Change the tenant (admin)',
    body: authBodySchemas.updateTenant,
    response: 'Tenant',
  },
  {
    method: 'POST',
    path: `${V1}/tenants`,
    operation: 'createTenant',
    auth: 'session',
    errors: [...BODY, 'FORBIDDEN', 'CONFLICT'],
    summary: 'Create a tenant (platform operator)',
    body: authBodySchemas.createTenant,
    response: 'CreatedTenant',
  },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function authDocs(): RouteDocs<(typeof authRoutes)[number]> {
  return {
    login: (tools) => ({ ...session(tools), requestBody: { example: { email: 'admin@localhost', password: 'correct horse battery staple' } } }),
    logout: ({ message }) => ({
      tag: 'Auth',
      description:
        'Ends the session on the server and clears the cookie. A session begun through an identity provider that has an end-session endpoint also answers `data.endSession: {name, url}`: its own sign-out.',
      responses: { 200: message('Logged out.') },
      errors: [],
    }),
    // Console sign-in through an identity provider (docs/authentication.md, "Identity providers"): for a browser.
    listSignInProviders: ({ json, envelopeOf, ref }) => ({
      tag: 'Auth',
      responses: { 200: json(envelopeOf({ type: 'array', items: ref('SignInProvider') }), 'The providers offering console sign-in; empty when none does.') },
      errors: [],
    }),
    startSignIn: () => ({
      tag: 'Auth',
      description: 'Authorization code flow with PKCE, `state` and `nonce`; sets the 10-minute `oidc_flow` cookie that ties the answer to this browser.',
      responses: { 302: { description: "To the provider's authorization endpoint (to `/dashboard?signin=failed` when it cannot be reached).", headers: ['Location'] } },
      errors: [],
    }),
    finishSignIn: () => ({
      tag: 'Auth',
      description: 'Where the provider sends the browser back: the code is exchanged, the ID token verified, the user found or created, and a session begun.',
      responses: { 302: { description: 'To `/dashboard` with the `session` cookie set, or to `/dashboard?signin=failed` (or `cancelled`) with the reason in the log.', headers: ['Location'] } },
      errors: [],
    }),
    refreshSession: session,
    refreshSessionShort: session,
    getMe: ({ json, envelopeOf, ref }) => ({ tag: 'Users', responses: { 200: json(envelopeOf(ref('User')), "The caller's user.") }, errors: [] }),
    updateMe: ({ json, envelopeOf, ref }) => ({
      tag: 'Users',
      description: 'Name, preferences (metadata source), or the password (with currentPassword).',
      requestBody: { example: { preferences: { theme: 'dark' } } },
      responses: { 200: json(envelopeOf(ref('User')), 'The changed user.') },
      errors: [400, 422],
    }),
    listUsers: ({ json, envelopeOf, ref }) => ({ tag: 'Users', responses: { 200: json(envelopeOf({ type: 'array', items: ref('User') }), "The tenant's users.") }, errors: [] }),
    createUser: ({ json, envelopeOf, ref }) => ({
      tag: 'Users',
      requestBody: { example: { email: 'ada@example.com', name: 'Ada', password: 'a long passphrase', role: 'user' } },
      responses: { 201: json(envelopeOf(ref('User')), 'The new user.') },
      errors: [400, 409, 422],
    }),
    getUser: ({ json, envelopeOf, ref }) => ({ tag: 'Users', responses: { 200: json(envelopeOf(ref('User')), 'The user.') }, errors: [404] }),
    updateUser: ({ json, envelopeOf, ref }) => ({ tag: 'Users', requestBody: {}, responses: { 200: json(envelopeOf(ref('User')), 'The changed user.') }, errors: [400, 404, 422] }),
    deleteUser: ({ json, envelopeOf }) => ({
      tag: 'Users',
      responses: { 200: json(envelopeOf({ type: 'object', required: ['id'], properties: { id: STRING } }, { message: true }), 'Removed.') },
      errors: [404],
    }),
    getMyTenant: ({ json, envelopeOf, ref }) => ({ tag: 'Tenants', responses: { 200: json(envelopeOf(ref('Tenant')), 'The tenant.') }, errors: [] }),
    updateMyTenant: ({ json, envelopeOf, ref }) => ({
      tag: 'Tenants',
      description: '`settings` is a metadata source, merged into the stored settings.',
      requestBody: {},
      responses: { 200: json(envelopeOf(ref('Tenant')), 'The changed tenant.') },
      errors: [400, 422],
    }),
    createTenant: ({ json, envelopeOf, ref }) => ({
      tag: 'Tenants',
      description: "Only the bootstrap admin's session may: a tenant and its first admin.",
      requestBody: {},
      responses: { 201: json(envelopeOf(ref('CreatedTenant')), 'The new tenant and its admin.') },
      errors: [400, 409, 422],
    }),
  };
}

/**
 * Bearer tokens of an identity provider, through HTTP on `npm start` with a real OpenID Provider
 * process on 127.0.0.1 (oidc-provider issuing JWT access tokens by the client credentials
 * grant): tokens read and write within their tenant and role, users are created once, scopes
 * narrow, tenants stay apart, every bad token is refused alike, a disabled user is refused, and
 * a new key at the provider is taken without a restart.
 */
import { randomBytes } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DevOidcService } from '../../../infra/local/dev-oidc.js';
import { api, type CallResult } from '../../support/http.js';
import { startServer, type TestServer } from '../../support/server.js';
import { clientCredentialsToken, signingKey, startProvider, type ProviderProcess } from './oidc-provider.js';

const AUDIENCE = 'https://api.oidc.test/api/v1';
const suffix = randomBytes(4).toString('hex');
const ACME = `oidc-acme-${suffix}`;
const GLOBEX = `oidc-globex-${suffix}`;

const service = (name: string, tenant: string, role: 'admin' | 'user' = 'user'): DevOidcService => ({ clientId: `${name}-${suffix}`, secret: `${name}-secret`, tenant, role });
const acmeUser = service('acme-user', ACME);
const acmeAdmin = service('acme-admin', ACME, 'admin');
const acmeJit = service('acme-jit', ACME);
const acmeVictim = service('acme-victim', ACME);
const globexUser = service('globex-user', GLOBEX);

let provider: ProviderProcess;
let server: TestServer;
let firstKey: Awaited<ReturnType<typeof signingKey>>;

beforeAll(async () => {
  firstKey = await signingKey('first');
  provider = await startProvider({ audience: AUDIENCE, services: [acmeUser, acmeAdmin, acmeJit, acmeVictim, globexUser], keys: [firstKey.privateJwk] });
  server = await startServer({
    dynamoEndpoint: inject('dynamoEndpoint'),
    env: {
      AUTH_OIDC_ISSUERS: JSON.stringify([{ issuer: provider.issuer, audience: AUDIENCE, createTenants: true, name: 'Test IdP' }]),
      // A new key is fetched within a second (60 by default), so the rotation test need not wait.
      AUTH_OIDC_JWKS_COOLDOWN_SECONDS: '1',
      // Tokens are counted at the API key rate, set apart from the sessions' here.
      RATE_LIMIT_API_KEY_PER_HOUR: '5000',
    },
  });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await provider?.stop();
});

function call(method: string, path: string, token: string, body?: unknown): Promise<CallResult> {
  return api(method, path, { baseUrl: server.url, apiKey: token, ...(body !== undefined ? { body } : {}) });
}

function dbCalls(response: CallResult): number {
  return Number(/db;dur=[\d.]+;desc="(\d+) call/.exec(response.headers.get('server-timing') ?? '')![1]);
}

/** A token the provider never issued, signed with `key` (the provider's own unless said otherwise). */
async function forged(claims: Record<string, unknown>, options: { key?: CryptoKey | Uint8Array; header?: Record<string, unknown> } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: acmeUser.clientId, tenant: ACME, role: 'user', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'first', typ: 'at+jwt', ...options.header } as never)
    .setIssuer((claims.iss as string) ?? provider.issuer)
    .setAudience((claims.aud as string) ?? AUDIENCE)
    .setIssuedAt((claims.iat as number) ?? now)
    .setExpirationTime((claims.exp as number) ?? now + 600)
    .sign(options.key ?? firstKey.privateKey);
}

function expectRefused(response: CallResult): void {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  expect(response.body).toEqual({ success: false, error: 'The bearer token is invalid', code: 'AUTHENTICATION_FAILED' });
}

describe('identity provider tokens', () => {
  it('read and write within their tenant and role, as a user the API created for them', async () => {
    const token = await clientCredentialsToken(provider.issuer, acmeUser);

    const me = await call('GET', '/api/v1/users/me', token);
    const created = await call('POST', '/api/v1/tasks', token, { title: 'from the identity provider' });
    const read = await call('GET', `/api/v1/tasks/${created.body.data.id}`, token);
    const users = await call('GET', '/api/v1/users', token);

    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ tenantId: ACME, role: 'user', name: acmeUser.clientId, issuer: provider.issuer, status: 'active' });
    expect(me.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(created.status).toBe(201);
    expect(read.body.data.title).toBe('from the identity provider');
    expect(users.status).toBe(403);
  });

  it('of an admin reach the admin operations of their tenant', async () => {
    const token = await clientCredentialsToken(provider.issuer, acmeAdmin);

    const users = await call('GET', '/api/v1/users', token);
    const keys = await call('GET', '/api/v1/api-keys', token);

    expect(users.status).toBe(200);
    expect(users.body.data.every((u: { tenantId: string }) => u.tenantId === ACME)).toBe(true);
    expect(users.body.data.find((u: { name: string }) => u.name === acmeAdmin.clientId)).toMatchObject({ role: 'admin', issuer: provider.issuer });
    // Key management needs a session.
    expect(keys.status).toBe(403);
  });

  it('create their user once, not twice, when the first requests come at the same time', async () => {
    const token = await clientCredentialsToken(provider.issuer, acmeJit);
    const admin = await clientCredentialsToken(provider.issuer, acmeAdmin);

    const answers = await Promise.all(Array.from({ length: 8 }, () => call('GET', '/api/v1/users/me', token)));
    const users = await call('GET', '/api/v1/users', admin);

    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(users.body.data.filter((u: { name: string }) => u.name === acmeJit.clientId)).toHaveLength(1);
  });

  it('read nothing for their user again while warm', async () => {
    const token = await clientCredentialsToken(provider.issuer, acmeUser);
    await call('GET', '/api/v1/tasks/tsk_00000000000000000000', token);

    const warm = await call('GET', '/api/v1/tasks/tsk_00000000000000000000', token);

    expect(warm.status).toBe(404);
    expect(dbCalls(warm)).toBe(1);
  });

  it('hold only the scopes their scope claim names, within what the role allows', async () => {
    const reader = await clientCredentialsToken(provider.issuer, acmeUser, 'tasks:read');
    const userAskingForAll = await clientCredentialsToken(provider.issuer, acmeUser, '*');

    expect((await call('GET', '/api/v1/tasks', reader)).status).toBe(200);
    const write = await call('POST', '/api/v1/tasks', reader, { title: 'not allowed' });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await call('GET', '/api/v1/orders', reader)).status).toBe(403);
    // `*` is an admin's: a user's token asking for it holds nothing.
    expect((await call('POST', '/api/v1/tasks', userAskingForAll, { title: 'not allowed' })).status).toBe(403);
  });

  it("of another tenant see nothing of this one's", async () => {
    const acme = await clientCredentialsToken(provider.issuer, acmeUser);
    const globex = await clientCredentialsToken(provider.issuer, globexUser);
    const secret = await call('POST', '/api/v1/tasks', acme, { title: `acme only ${suffix}` });

    const list = await call('GET', '/api/v1/tasks?limit=100', globex);
    const read = await call('GET', `/api/v1/tasks/${secret.body.data.id}`, globex);
    const me = await call('GET', '/api/v1/users/me', globex);

    expect(me.body.data.tenantId).toBe(GLOBEX);
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: { id: string }) => t.id)).not.toContain(secret.body.data.id);
    expect(read.status).toBe(404);
  });

  it('are accepted within 60 seconds of clock skew', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await forged({ exp: now - 30, iat: now - 600 });

    expect((await call('GET', '/api/v1/users/me', token)).status).toBe(200);
  });

  describe('are refused alike, with invalid_token', () => {
    const now = () => Math.floor(Date.now() / 1000);

    it('when expired', async () => expectRefused(await call('GET', '/api/v1/users/me', await forged({ exp: now() - 120, iat: now() - 900 }))));

    it('when not yet valid', async () => expectRefused(await call('GET', '/api/v1/users/me', await forged({ nbf: now() + 120 }))));

    it('for another audience', async () => expectRefused(await call('GET', '/api/v1/users/me', await forged({ aud: 'https://another.api.test' }))));

    it('from another issuer', async () => expectRefused(await call('GET', '/api/v1/users/me', await forged({ iss: `${provider.issuer}/other` }))));

    it('signed with a key the provider does not publish', async () => {
      const stranger = await signingKey('unknown');
      expectRefused(await call('GET', '/api/v1/users/me', await forged({}, { key: stranger.privateKey, header: { kid: 'unknown' } })));
    });

    it('with alg none', async () => {
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const token = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ iss: provider.issuer, aud: AUDIENCE, sub: acmeUser.clientId, tenant: ACME, exp: now() + 600 })}.`;
      expectRefused(await call('GET', '/api/v1/users/me', token));
    });

    it('as an HMAC signed with the provider’s public key', async () => {
      const pem = createPublicKey({ key: firstKey.publicJwk as JWK & { kty: string }, format: 'jwk' }).export({ format: 'pem', type: 'spki' });
      const token = await forged({}, { key: new TextEncoder().encode(String(pem)), header: { alg: 'HS256' } });
      expectRefused(await call('GET', '/api/v1/users/me', token));
    });

    it('with a tampered payload', async () => {
      const [header, payload, signature] = (await clientCredentialsToken(provider.issuer, acmeUser)).split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const tampered = Buffer.from(JSON.stringify({ ...claims, role: 'admin' })).toString('base64url');
      expectRefused(await call('GET', '/api/v1/users', `${header}.${tampered}.${signature}`));
    });

    it('for a user disabled in this API, until enabled again', async () => {
      const admin = await clientCredentialsToken(provider.issuer, acmeAdmin);
      const token = await clientCredentialsToken(provider.issuer, acmeVictim);
      const victim = (await call('GET', '/api/v1/users/me', token)).body.data;

      const disabled = await call('PATCH', `/api/v1/users/${victim.id}`, admin, { status: 'disabled' });
      const refused = await call('GET', '/api/v1/users/me', token);
      const enabled = await call('PATCH', `/api/v1/users/${victim.id}`, admin, { status: 'active' });
      const again = await call('GET', '/api/v1/users/me', token);

      expect(disabled.body.data.status).toBe('disabled');
      expectRefused(refused);
      expect(enabled.body.data.status).toBe('active');
      expect(again.status).toBe(200);
    });
  });

  it('signed with a new key of the provider are accepted without a restart', async () => {
    const before = await clientCredentialsToken(provider.issuer, acmeUser);
    expect((await call('GET', '/api/v1/users/me', before)).status).toBe(200);
    const next = await signingKey('second');

    await provider.restart([next.privateJwk, firstKey.privateJwk]);
    const after = await clientCredentialsToken(provider.issuer, acmeUser);
    // The kept keys were fetched just now: the unknown `kid` fetches them again after the cooldown.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const answer = await call('GET', '/api/v1/users/me', after);

    expect(JSON.parse(Buffer.from(after.split('.')[0], 'base64url').toString()).kid).toBe('second');
    expect(answer.status).toBe(200);
    expect(answer.body.data.name).toBe(acmeUser.clientId);
  });
});

/**
 * Idempotency-Key through HTTP on DynamoDB Local: retries replay the first response and create
 * nothing new, a reused key with another body is refused, callers are independent, malformed
 * keys are refused, failures free the key, in-flight and abandoned locks.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { config } from '../../../shared/config.js';
import { idempotencyItemKey, idempotencyScope, requestFingerprint } from '../../../shared/http/idempotency.js';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';

let tenant: TestTenant;
let outsider: TestTenant;
let member: TestUser;
let client: DynamoDBDocumentClient;

beforeAll(async () => {
  tenant = await newTenant();
  outsider = await newTenant();
  member = await newUser(tenant.admin.cookie);
  client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
});
afterAll(() => client?.destroy());

function newUserBody(label = 'idem') {
  return { email: `${label}-${randomUUID().slice(0, 8)}@test.local`, name: 'Idempotent', password: 'pw-long-enough-1', role: 'user' };
}

function createUser(cookie: string, body: unknown, key?: string) {
  return api('POST', '/api/v1/users', { cookie, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
}

async function usersWithEmail(cookie: string, email: string): Promise<number> {
  const users = await api('GET', '/api/v1/users', { cookie });
  return users.body.data.filter((u: { email: string }) => u.email === email).length;
}

describe('Idempotency-Key on POST', () => {
  it('answers a retry with the first response, marked as replayed, and creates nothing new', async () => {
    const body = newUserBody();
    const key = randomUUID();

    const first = await createUser(tenant.admin.cookie, body, key);
    const retry = await createUser(tenant.admin.cookie, body, key);

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(retry.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await usersWithEmail(tenant.admin.cookie, body.email)).toBe(1);
  });

  it('refuses the same key with a different body with 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const key = randomUUID();
    await createUser(tenant.admin.cookie, newUserBody(), key);
    const other = newUserBody();

    const response = await createUser(tenant.admin.cookie, other, key);

    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ success: false, code: 'IDEMPOTENCY_KEY_REUSED', error: expect.any(String) });
    expect(await usersWithEmail(tenant.admin.cookie, other.email)).toBe(0);
  });

  it('keeps the keys of different callers apart', async () => {
    const key = randomUUID();
    const mine = await createUser(tenant.admin.cookie, newUserBody(), key);

    const theirs = await createUser(outsider.admin.cookie, newUserBody(), key);

    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it.each([
    ['longer than 255 characters', 'k'.repeat(256)],
    ['empty', ''],
    ['not printable ASCII', 'clé-1'],
  ])('refuses a key that is %s with 400 INVALID_REQUEST naming the header', async (_, key) => {
    const body = newUserBody();

    const response = await createUser(tenant.admin.cookie, body, key);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_REQUEST', details: { 'Idempotency-Key': expect.any(String) } });
    expect(await usersWithEmail(tenant.admin.cookie, body.email)).toBe(0);
  });

  it('accepts a key of exactly 255 printable characters', async () => {
    const response = await createUser(tenant.admin.cookie, newUserBody(), `${randomUUID()}~`.padEnd(255, 'x'));

    expect(response.status).toBe(201);
  });

  it('frees the key when the request fails, so that the client can retry it', async () => {
    const key = randomUUID();
    const invalid = { ...newUserBody(), email: 'not-an-email' };

    const failed = await createUser(tenant.admin.cookie, invalid, key);
    const failedAgain = await createUser(tenant.admin.cookie, invalid, key);
    const fixed = await createUser(tenant.admin.cookie, newUserBody(), key);

    expect(failed.status).toBe(422);
    expect(failedAgain.status).toBe(422);
    expect(failedAgain.headers.get('idempotent-replayed')).toBeNull();
    expect(fixed.status).toBe(201);
  });

  it('replays a created API key without keeping the key readable in the table', async () => {
    const body = { name: `idem-${randomUUID()}`, scopes: ['tasks:read'] };
    const key = randomUUID();

    const first = await api('POST', '/api/v1/api-keys', { cookie: member.cookie, body, headers: { 'Idempotency-Key': key } });
    const retry = await api('POST', '/api/v1/api-keys', { cookie: member.cookie, body, headers: { 'Idempotency-Key': key } });

    expect(first.status).toBe(201);
    expect(retry.body.data.key).toBe(first.body.data.key);
    const list = await api('GET', '/api/v1/api-keys', { cookie: member.cookie });
    expect(list.body.data.filter((k: { name: string }) => k.name === body.name)).toHaveLength(1);
    const scope = idempotencyScope({ type: 'session', user: { id: member.id, email: member.email, role: 'user' }, tenantId: tenant.tenantId, scopes: [] }, '');
    const { Item } = await client.send(new GetCommand({ TableName: config().tables.limits, Key: idempotencyItemKey(scope, key) }));
    expect(Item).toMatchObject({ status: 'completed' });
    expect(Buffer.from(Item!.response as Uint8Array).includes(first.body.data.key)).toBe(false);
    expect(JSON.stringify(Item)).not.toContain(first.body.data.key);
  });

  it('ignores the header on other methods', async () => {
    const response = await api('GET', '/api/v1/users/me', { cookie: member.cookie, headers: { 'Idempotency-Key': 'k'.repeat(300) } });

    expect(response.status).toBe(200);
  });

  describe('while the first request holds the key', () => {
    const adminScope = () => idempotencyScope({ type: 'session', user: { id: tenant.admin.id, email: tenant.admin.email, role: 'admin' }, tenantId: tenant.tenantId, scopes: [] }, '');

    async function lock(key: string, body: unknown, lockedAt: number) {
      const fingerprint = requestFingerprint('POST', '/api/v1/users', {}, Buffer.from(JSON.stringify(body)));
      await client.send(
        new PutCommand({
          TableName: config().tables.limits,
          Item: { ...idempotencyItemKey(adminScope(), key), status: 'in_progress', fingerprint, lockId: randomUUID(), lockedAt, expiresAt: Math.floor(Date.now() / 1000) + 3600 },
        }),
      );
    }

    it('answers a retry with 409 IDEMPOTENCY_KEY_IN_PROGRESS and Retry-After: 1', async () => {
      const body = newUserBody();
      const key = randomUUID();
      await lock(key, body, Date.now());

      const response = await createUser(tenant.admin.cookie, body, key);

      expect(response.status).toBe(409);
      expect(response.body.code).toBe('IDEMPOTENCY_KEY_IN_PROGRESS');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await usersWithEmail(tenant.admin.cookie, body.email)).toBe(0);
    });

    it('takes over a lock abandoned for more than 30 seconds', async () => {
      const body = newUserBody();
      const key = randomUUID();
      await lock(key, body, Date.now() - 31_000);

      const response = await createUser(tenant.admin.cookie, body, key);

      expect(response.status).toBe(201);
      expect(await usersWithEmail(tenant.admin.cookie, body.email)).toBe(1);
    });
  });
});

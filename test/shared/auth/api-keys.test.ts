import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { ApiError } from '../../../shared/errors.js';
import type { ApiRequest } from '../../../shared/http/types.js';
import {
  API_KEY_PATTERN,
  FAILURE_FLOOR_MS,
  LAST_USED_INTERVAL_MS,
  apiKeyCacheSize,
  apiKeyScopeDenied,
  clearApiKeyCache,
  effectiveScopes,
  evictApiKey,
  extractApiKey,
  hashApiKey,
  recordApiKeyUse,
  sameHash,
  verifyApiKey,
  type ApiKeyItem,
} from '../../../shared/auth/api-keys.js';
import { KEY_BODY_ALPHABET, generateApiKey } from '../../../shared/auth/key-management.js';

const dynamo = mockClient(DynamoDBDocumentClient);

const KEY = 'sk_live_' + 'a'.repeat(20) + 'B-_9'.repeat(5);
const HASH = hashApiKey(KEY);

function keyItem(overrides: Partial<ApiKeyItem> = {}): ApiKeyItem {
  return {
    pk: `APIKEY#${HASH}`,
    sk: 'APIKEY',
    id: 'key_1',
    keyPrefix: KEY.slice(0, 12),
    name: 'ci',
    scopes: ['tasks:read'],
    status: 'active',
    keyExpiresAt: null,
    userId: 'usr_1',
    tenantId: 'ten_1',
    environment: 'live',
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    gsi1pk: 'USER#usr_1#KEYS',
    gsi1sk: '2024-01-01T00:00:00.000Z#key_1',
    ...overrides,
  };
}

const owner = { id: 'usr_1', tenantId: 'ten_1', email: 'owner@test.local', name: 'Owner', role: 'user' };

function store(item: ApiKeyItem | undefined, user: Record<string, unknown> | null = owner): void {
  dynamo.on(GetCommand).callsFake((input: { Key: { pk: string } }) => {
    if (input.Key.pk.startsWith('APIKEY#')) return { Item: item && input.Key.pk === item.pk ? item : undefined };
    if (user && input.Key.pk === `USER#${user.id}`) return { Item: user };
    return {};
  });
  dynamo.on(UpdateCommand).resolves({});
}

/** The audit entries written (UpdateItem upserts), as items. */
function auditWrites(): Record<string, unknown>[] {
  return dynamo
    .commandCalls(UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => String(input.Key?.pk).startsWith('AUDIT#'))
    .map((input) => {
      const item: Record<string, unknown> = { ...input.Key };
      for (const [alias, name] of Object.entries(input.ExpressionAttributeNames ?? {})) item[name] = input.ExpressionAttributeValues![`:v${alias.slice(2)}`];
      return item;
    });
}

function request(): ApiRequest {
  return { ip: '198.51.100.7', userAgent: 'vitest', headers: {} } as unknown as ApiRequest;
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

beforeEach(() => {
  dynamo.reset();
  clearApiKeyCache();
  resetConfig();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  delete process.env.API_KEY_CACHE_SECONDS;
  resetConfig();
});

describe('extractApiKey', () => {
  it('prefers Authorization: Bearer over X-API-Key', () => {
    expect(extractApiKey({ authorization: 'Bearer sk_live_abc', 'x-api-key': 'sk_live_other' })).toBe('sk_live_abc');
  });

  it('reads X-API-Key when there is no bearer token', () => {
    expect(extractApiKey({ 'x-api-key': ' sk_test_abc ' })).toBe('sk_test_abc');
    expect(extractApiKey({ authorization: 'Basic dXNlcjpwdw==', 'x-api-key': 'sk_test_abc' })).toBe('sk_test_abc');
  });

  it('accepts the Bearer scheme case-insensitively', () => {
    expect(extractApiKey({ authorization: 'bearer sk_live_x' })).toBe('sk_live_x');
  });

  it('finds nothing without either header', () => {
    expect(extractApiKey({})).toBeUndefined();
    expect(extractApiKey({ authorization: 'Bearer ' })).toBeUndefined();
  });
});

describe('key format', () => {
  it('generates sk_live_ / sk_test_ plus 40 characters of [A-Za-z0-9_-]', () => {
    for (let i = 0; i < 50; i++) {
      const live = generateApiKey();
      expect(live).toMatch(/^sk_live_[A-Za-z0-9_-]{40}$/);
      expect(live).toMatch(API_KEY_PATTERN);
    }
    expect(generateApiKey('test')).toMatch(/^sk_test_[A-Za-z0-9_-]{40}$/);
    expect(KEY_BODY_ALPHABET).toHaveLength(64);
  });

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey()));
    expect(keys.size).toBe(1000);
  });

  it('uses every character of the alphabet', () => {
    const seen = new Set([...Array.from({ length: 200 }, () => generateApiKey().slice(8)).join('')]);
    expect(seen.size).toBe(64);
  });

  it('refuses the wrong environment, length or characters', () => {
    for (const bad of [KEY.slice(0, -1), `${KEY}a`, KEY.replace('live', 'prod'), KEY.replace('a', '+'), `Bearer ${KEY}`, '']) {
      expect(API_KEY_PATTERN.test(bad)).toBe(false);
    }
  });
});

describe('sameHash and effectiveScopes', () => {
  it('compares hashes exactly, whatever their length', () => {
    expect(sameHash(HASH, HASH)).toBe(true);
    expect(sameHash(HASH, hashApiKey('x'))).toBe(false);
    expect(sameHash(HASH, 'abc')).toBe(false);
  });

  it("drops '*' from a key whose owner is no longer an admin", () => {
    expect(effectiveScopes(['*', 'tasks:read'], 'user')).toEqual(['tasks:read']);
    expect(effectiveScopes(['*'], 'admin')).toEqual(['*']);
  });
});

describe('verifyApiKey', () => {
  it("grants the owner's context with the key's scopes", async () => {
    store(keyItem());

    const auth = await verifyApiKey(KEY, request());

    expect(auth).toEqual({
      type: 'api_key',
      user: { id: 'usr_1', email: 'owner@test.local', name: 'Owner', role: 'user' },
      tenantId: 'ten_1',
      scopes: ['tasks:read'],
      keyId: 'key_1',
    });
  });

  it('looks the key up by its SHA-256 and never by the key itself', async () => {
    store(keyItem());

    await verifyApiKey(KEY, request());

    const keys = dynamo.commandCalls(GetCommand).map((c) => c.args[0].input.Key!.pk as string);
    expect(keys).toEqual([`APIKEY#${HASH}`, 'USER#usr_1']);
    expect(JSON.stringify(dynamo.calls().map((c) => c.args[0].input))).not.toContain(KEY);
  });

  it('serves a warm key from the cache with no reads', async () => {
    store(keyItem());
    await verifyApiKey(KEY, request());
    dynamo.resetHistory();

    for (let i = 0; i < 5; i++) await verifyApiKey(KEY, request());

    expect(dynamo.calls()).toHaveLength(0);
  });

  it('reloads after the cache time', async () => {
    store(keyItem());
    const start = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(start);
    await verifyApiKey(KEY, request());
    dynamo.resetHistory();

    clock.mockReturnValue(start + 299_000);
    await verifyApiKey(KEY, request());
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);

    clock.mockReturnValue(start + 300_001);
    await verifyApiKey(KEY, request());
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(2);
  });

  it('takes a changed key into account at once after eviction by id', async () => {
    store(keyItem());
    await verifyApiKey(KEY, request());

    store(keyItem({ status: 'inactive' }));
    evictApiKey({ keyId: 'key_1' });

    const error = await failure(verifyApiKey(KEY, request()));
    expect(error.code).toBe('INVALID_API_KEY');
  });

  it('refuses a revoked key at once after eviction by hash', async () => {
    store(keyItem());
    await verifyApiKey(KEY, request());

    store(undefined);
    evictApiKey({ hash: HASH });

    expect((await failure(verifyApiKey(KEY, request()))).code).toBe('INVALID_API_KEY');
  });

  it('refuses a malformed key without any lookup, after at least 100 ms', async () => {
    store(keyItem());
    const started = performance.now();

    const error = await failure(verifyApiKey('sk_live_short', request()));

    expect(performance.now() - started).toBeGreaterThanOrEqual(FAILURE_FLOOR_MS);
    expect(error.status).toBe(401);
    expect(error.code).toBe('INVALID_API_KEY');
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('refuses an unknown key with INVALID_API_KEY after at least 100 ms', async () => {
    store(undefined);
    const started = performance.now();

    const error = await failure(verifyApiKey(KEY, request()));

    expect(performance.now() - started).toBeGreaterThanOrEqual(FAILURE_FLOOR_MS);
    expect(error.code).toBe('INVALID_API_KEY');
  });

  it('remembers an unknown key for the cache time (no second lookup)', async () => {
    store(undefined);
    await failure(verifyApiKey(KEY, request()));
    dynamo.resetHistory();

    await failure(verifyApiKey(KEY, request()));

    expect(dynamo.calls()).toHaveLength(0);
  });

  it('refuses a key whose owner is gone', async () => {
    store(keyItem(), null);

    expect((await failure(verifyApiKey(KEY, request()))).code).toBe('INVALID_API_KEY');
  });

  it('refuses an inactive key with INVALID_API_KEY and audits it', async () => {
    store(keyItem({ status: 'inactive' }));

    const error = await failure(verifyApiKey(KEY, request()));

    expect(error.code).toBe('INVALID_API_KEY');
    const audit = auditWrites()[0];
    expect(audit).toMatchObject({ pk: 'AUDIT#key_1', keyId: 'key_1', action: 'inactive', ipAddress: '198.51.100.7', userAgent: 'vitest' });
  });

  it('refuses an expired key with EXPIRED_KEY and audits it', async () => {
    store(keyItem({ keyExpiresAt: new Date(Date.now() - 1000).toISOString() }));
    const started = performance.now();

    const error = await failure(verifyApiKey(KEY, request()));

    expect(performance.now() - started).toBeGreaterThanOrEqual(FAILURE_FLOOR_MS);
    expect(error.status).toBe(401);
    expect(error.code).toBe('EXPIRED_KEY');
    expect(auditWrites()[0]).toMatchObject({ action: 'expired' });
  });

  it('expires a cached key on time, without a reload', async () => {
    store(keyItem({ keyExpiresAt: new Date(Date.now() + 60_000).toISOString() }));
    await verifyApiKey(KEY, request());
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 61_000);

    expect((await failure(verifyApiKey(KEY, request()))).code).toBe('EXPIRED_KEY');
  });

  it('pads a database error to the floor and lets it through', async () => {
    dynamo.on(GetCommand).rejects(Object.assign(new Error('down'), { name: 'ServiceUnavailable' }));
    const started = performance.now();

    const error = (await verifyApiKey(KEY, request()).catch((e: unknown) => e)) as Error;

    expect(performance.now() - started).toBeGreaterThanOrEqual(FAILURE_FLOOR_MS);
    expect(error.name).toBe('ServiceUnavailable');
  });

  it('bounds the cache', async () => {
    store(undefined);
    await failure(verifyApiKey(KEY, request()));
    expect(apiKeyCacheSize()).toBe(1);
  });
});

describe('apiKeyScopeDenied', () => {
  it('audits the missing scope and pads the denial from the start of verification', async () => {
    store(keyItem());
    const req = request();
    const started = performance.now();
    req.auth = await verifyApiKey(KEY, req);

    await apiKeyScopeDenied(req, 'tasks:delete');

    expect(performance.now() - started).toBeGreaterThanOrEqual(FAILURE_FLOOR_MS);
    expect(auditWrites()[0]).toMatchObject({ action: 'insufficient_scope', details: { scope: 'tasks:delete' } });
  });
});

describe('recordApiKeyUse', () => {
  it('writes lastUsedAt and the request count at most once a minute per key', async () => {
    store(keyItem());
    await verifyApiKey(KEY, request());
    const t0 = Date.now();

    recordApiKeyUse('key_1', t0);
    for (let i = 1; i <= 10; i++) recordApiKeyUse('key_1', t0 + i * 1000);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);

    recordApiKeyUse('key_1', t0 + LAST_USED_INTERVAL_MS);
    const updates = dynamo.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatchObject({ Key: { pk: `APIKEY#${HASH}` }, ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':n': 1 } });
    expect(updates[1].ExpressionAttributeValues).toEqual({ ':t': new Date(t0 + LAST_USED_INTERVAL_MS).toISOString(), ':n': 11 });
  });

  it('swallows a failed write', async () => {
    store(keyItem());
    dynamo.on(UpdateCommand).rejects(new Error('boom'));
    await verifyApiKey(KEY, request());

    expect(() => recordApiKeyUse('key_1')).not.toThrow();
    await new Promise((r) => setTimeout(r, 10));
  });
});

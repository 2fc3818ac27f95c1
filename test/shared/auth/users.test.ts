import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_OBJECT_BYTES, mergeObject, padTo, requireAdmin, updateUserAsAdmin } from '../../../shared/auth/users.js';
import { ApiError } from '../../../shared/errors.js';
import type { AuthContext } from '../../../shared/http/types.js';

function caller(overrides: Partial<AuthContext> & { role?: 'admin' | 'user' } = {}): AuthContext {
  const { role = 'admin', ...rest } = overrides;
  return { type: 'session', user: { id: 'usr_1', email: 'a@b.c', role }, tenantId: 'ten_1', scopes: role === 'admin' ? ['*'] : ['read'], ...rest };
}

describe('mergeObject', () => {
  it('merges shallowly and removes keys set to null', () => {
    expect(mergeObject({ a: 1, b: { x: 1 }, c: 3 }, { b: { y: 2 }, c: null, d: 4 }, 'preferences')).toEqual({ a: 1, b: { y: 2 }, d: 4 });
  });

  it('refuses a result larger than the limit with a 422 on the field', () => {
    const call = () => mergeObject({}, { big: 'x'.repeat(MAX_OBJECT_BYTES) }, 'settings');

    expect(call).toThrowError(ApiError);
    try {
      call();
    } catch (error) {
      expect((error as ApiError).status).toBe(422);
      expect((error as ApiError).details).toHaveProperty('settings');
    }
  });

  it('refuses with a 422 on the field what DynamoDB cannot store: deep nesting, empty keys, unsafe numbers, __proto__', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const bad = [{ deep }, { '': 1 }, { x: { '': 2 } }, { x: Infinity }, { x: 12345678901234567890123 }, JSON.parse('{"__proto__": {"a": 1}}')];

    for (const changes of bad) {
      let thrown: unknown;
      try {
        mergeObject({}, changes, 'preferences');
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(changes)).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).status).toBe(422);
      expect((thrown as ApiError).details).toHaveProperty('preferences');
    }
  });
});

describe('requireAdmin', () => {
  it('lets an admin session through', () => {
    expect(requireAdmin(caller()).user.id).toBe('usr_1');
  });

  it('lets an admin key with * through, but not an admin key without it', () => {
    expect(() => requireAdmin(caller({ type: 'api_key', scopes: ['*'] }))).not.toThrow();
    expect(() => requireAdmin(caller({ type: 'api_key', scopes: ['tasks:read'] }))).toThrowError(/administrators/);
  });

  it('refuses a user with 403 FORBIDDEN', () => {
    try {
      requireAdmin(caller({ role: 'user' }));
      throw new Error('expected a refusal');
    } catch (error) {
      expect((error as ApiError).status).toBe(403);
      expect((error as ApiError).code).toBe('FORBIDDEN');
    }
  });
});

describe('padTo', () => {
  it('waits until the floor has passed since the start', async () => {
    const started = performance.now();

    await padTo(started, 50);

    expect(performance.now() - started).toBeGreaterThanOrEqual(49);
  });

  it('does not wait when the floor has already passed', async () => {
    const before = performance.now();

    await padTo(before - 1000, 50);

    expect(performance.now() - before).toBeLessThan(20);
  });
});

describe('updateUserAsAdmin on the platform operator', () => {
  // The default tenant names usr_op as its operator; usr_admin is another admin of that tenant.
  const dynamo = mockClient(DynamoDBDocumentClient);
  afterAll(() => dynamo.restore());
  const items: Record<string, Record<string, unknown>> = {
    'TENANT#ten_default': { id: 'ten_default', name: 'Default', settings: {}, operatorUserId: 'usr_op' },
    'USER#usr_op': { id: 'usr_op', tenantId: 'ten_default', email: 'op@x.y', name: 'Op', role: 'admin', passwordHash: 'h', preferences: {} },
  };
  dynamo.on(GetCommand).callsFake((input) => ({ Item: items[input.Key.pk] }));
  dynamo.on(UpdateCommand).resolves({ Attributes: items['USER#usr_op'] });
  const otherAdmin = caller({ user: { id: 'usr_admin', email: 'a@x.y', role: 'admin' }, tenantId: 'ten_default' });

  it("refuses another admin's reset of the operator's password with 403, writing nothing", async () => {
    const attempt = updateUserAsAdmin(otherAdmin, 'usr_op', { password: 'taken-over-1' });

    await expect(attempt).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});

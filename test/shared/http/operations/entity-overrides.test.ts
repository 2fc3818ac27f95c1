/**
 * Custom overrides, in process (the DynamoDB client mocked: a session and a rate-limit counter
 * are all the stack reads): an override replaces one operation of one entity, is resolved
 * before the registry, and can serve a slug the registry does not have.
 */
import { GetCommand, DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/entities/handler.js';
import { hashToken } from '../../../../shared/auth/sessions.js';
import { registerOverride } from '../../../../shared/http/operations/entity-overrides.js';
import { matchPath } from '../../../../shared/routes.js';
import { lambdaContext, parsed, proxyEvent } from '../../../support/events.js';

const TOKEN = 'A'.repeat(43);
const USER = { pk: 'USER#usr_1', sk: 'USER', id: 'usr_1', tenantId: 'ten_1', email: 'u@test.local', name: 'U', role: 'user', passwordHash: 'x' };
const SESSION = { pk: `SESSION#${hashToken(TOKEN)}`, sk: 'SESSION', userId: 'usr_1', tenantId: 'ten_1', extendedAt: Math.floor(Date.now() / 1000), expiresAt: Math.floor(Date.now() / 1000) + 3600 };

const dynamo = mockClient(DynamoDBDocumentClient);
const removals: (() => void)[] = [];

beforeEach(() => {
  dynamo.reset();
  dynamo.on(GetCommand, { Key: { pk: SESSION.pk, sk: 'SESSION' } }).resolves({ Item: SESSION });
  dynamo.on(GetCommand, { Key: { pk: USER.pk, sk: 'USER' } }).resolves({ Item: USER });
  dynamo.on(UpdateCommand).resolves({ Attributes: { n: 1 } });
  dynamo.on(QueryCommand).resolves({ Items: [] });
});

afterEach(() => removals.splice(0).forEach((remove) => remove()));

function call(method: string, path: string, options: { session?: boolean; body?: unknown } = {}) {
  const headers: Record<string, string> = options.session ? { Cookie: `session=${TOKEN}` } : {};
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const event = proxyEvent({ method, path, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  return handler(event, lambdaContext()).then(parsed);
}

describe('custom overrides', () => {
  it('replace one operation of one registered entity, before the registry', async () => {
    removals.push(
      registerOverride({ entity: 'tasks', operation: 'list', handler: async (req, ctx) => ({ data: [{ from: 'override', entity: ctx.entity?.name, user: req.auth?.user.id }] }) }),
    );

    const response = await call('GET', '/api/v1/tasks', { session: true });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: [{ from: 'override', entity: 'task', user: 'usr_1' }] });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('leave the entity’s other operations to the registry', async () => {
    removals.push(registerOverride({ entity: 'tasks', operation: 'list', handler: async () => ({ data: [] }) }));

    const response = await call('POST', '/api/v1/tasks', { session: true, body: { priority: 'urgent' } });

    expect(response.status).toBe(422);
    expect(response.body.details).toEqual({ title: 'is required', priority: 'must be one of: low, medium, high' });
  });

  it('can serve a slug the registry does not have, which otherwise answers 404 ENTITY_NOT_FOUND', async () => {
    const before = await call('GET', '/api/v1/reports', { session: true });
    removals.push(registerOverride({ entity: 'reports', operation: 'list', handler: async () => ({ data: ['weekly'] }) }));

    const after = await call('GET', '/api/v1/reports', { session: true });

    expect(before.status).toBe(404);
    expect(before.body.code).toBe('ENTITY_NOT_FOUND');
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual(['weekly']);
  });

  it('are anonymous only when they say they are public', async () => {
    removals.push(registerOverride({ entity: 'reports', operation: 'read', handler: async (req) => ({ data: { id: req.params.id } }) }));
    removals.push(registerOverride({ entity: 'news', operation: 'read', public: true, handler: async (req) => ({ data: { id: req.params.id } }) }));

    const privateRead = await call('GET', '/api/v1/reports/r1');
    const publicRead = await call('GET', '/api/v1/news/n1');

    expect(privateRead.status).toBe(401);
    expect(publicRead.status).toBe(200);
    expect(publicRead.body.data).toEqual({ id: 'n1' });
  });

  it('never shadow the core paths, which resolve first', () => {
    expect(matchPath('GET', '/api/v1/users')?.route?.family).toBe('auth');
    expect(matchPath('GET', '/api/v1/api-keys/key_1')?.route?.family).toBe('keys');
    expect(matchPath('GET', '/api/v1/tasks/tsk_1')?.route?.family).toBe('entities');
  });

  it('are refused when they name an operation that does not exist', () => {
    expect(() => registerOverride({ entity: 'tasks', operation: 'purge' as never, handler: async () => ({}) })).toThrow(/Unknown operation 'purge'/);
  });
});

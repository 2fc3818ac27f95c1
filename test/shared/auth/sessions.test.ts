import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import {
  SLIDE_INTERVAL_SECONDS,
  clearSessionCache,
  clearedSessionCookie,
  forgetSessionsOfUser,
  revokeSession,
  createSession,
  hashToken,
  needsExtension,
  sessionCookie,
  verifySession,
} from '../../../shared/auth/sessions.js';

const dynamo = mockClient(DynamoDBDocumentClient);
const now = () => Math.floor(Date.now() / 1000);
const user = { id: 'usr_1', tenantId: 'ten_1', email: 'a@b.c', name: 'A', role: 'user' as const };
const userItem = { pk: 'USER#usr_1', sk: 'USER', ...user, passwordHash: 'scrypt$x', preferences: {} };

function storeSession(session: Record<string, unknown> | undefined): void {
  dynamo.on(GetCommand).callsFake((input: { Key: { pk: string } }) => {
    if (input.Key.pk.startsWith('SESSION#')) return { Item: session };
    if (input.Key.pk === 'USER#usr_1') return { Item: userItem };
    return {};
  });
}

beforeEach(() => {
  dynamo.reset();
  clearSessionCache();
  delete process.env.SECURE_COOKIES;
  resetConfig();
});

afterEach(() => {
  delete process.env.SECURE_COOKIES;
  resetConfig();
});

describe('session cookies', () => {
  it('are HttpOnly, SameSite=Lax, Path=/ with a Max-Age, without Secure by default', () => {
    expect(sessionCookie('tok', 3600)).toBe('session=tok; HttpOnly; SameSite=Lax; Path=/; Max-Age=3600');
  });

  it('add Secure when SECURE_COOKIES=1', () => {
    process.env.SECURE_COOKIES = '1';
    resetConfig();

    expect(sessionCookie('tok', 60)).toBe('session=tok; HttpOnly; SameSite=Lax; Path=/; Max-Age=60; Secure');
  });

  it('are cleared with an empty value and Max-Age=0', () => {
    expect(clearedSessionCookie()).toBe('session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0');
  });
});

describe('createSession', () => {
  it('stores only the SHA-256 of a 32-byte random token, with a 12 hour expiry', async () => {
    dynamo.on(PutCommand).resolves({});

    const session = await createSession(user);

    const item = dynamo.commandCalls(PutCommand)[0].args[0].input.Item!;
    expect(Buffer.from(session.token, 'base64url').length).toBe(32);
    expect(item.pk).toBe(`SESSION#${hashToken(session.token)}`);
    expect(JSON.stringify(item)).not.toContain(session.token);
    expect(item.expiresAt).toBeGreaterThanOrEqual(now() + 12 * 3600 - 2);
    expect(item).toMatchObject({ userId: 'usr_1', tenantId: 'ten_1', gsi1pk: 'USER#usr_1#SESSIONS' });
  });
});

describe('verifySession', () => {
  const token = 'A'.repeat(43);

  it('answers the session caller with the role scopes and the token hash as session id', async () => {
    storeSession({ pk: 'SESSION#h', userId: 'usr_1', tenantId: 'ten_1', extendedAt: now(), expiresAt: now() + 100 });

    const auth = await verifySession(token);

    expect(auth).toEqual({
      type: 'session',
      user: { id: 'usr_1', email: 'a@b.c', name: 'A', role: 'user' },
      tenantId: 'ten_1',
      scopes: ['read', 'write', 'delete'],
      sessionId: hashToken(token),
    });
  });

  it('answers undefined for an unknown token', async () => {
    storeSession(undefined);

    expect(await verifySession(token)).toBeUndefined();
  });

  it('answers undefined for an expired session even before the TTL removed it', async () => {
    storeSession({ pk: 'SESSION#h', userId: 'usr_1', tenantId: 'ten_1', extendedAt: now() - 100, expiresAt: now() - 1 });

    expect(await verifySession(token)).toBeUndefined();
  });

  it('refuses a malformed token without reading the table', async () => {
    expect(await verifySession('not a token')).toBeUndefined();
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('does not write when the session was extended recently', async () => {
    storeSession({ pk: 'SESSION#h', userId: 'usr_1', tenantId: 'ten_1', extendedAt: now() - 10, expiresAt: now() + 100 });

    const auth = await verifySession(token);

    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(auth?.sessionRenewedUntil).toBeUndefined();
  });

  it('slides the expiry forward once the last extension is older than the interval', async () => {
    storeSession({ pk: 'SESSION#h', userId: 'usr_1', tenantId: 'ten_1', extendedAt: now() - SLIDE_INTERVAL_SECONDS - 5, expiresAt: now() + 100 });
    dynamo.on(UpdateCommand).resolves({});

    const auth = await verifySession(token);

    const update = dynamo.commandCalls(UpdateCommand)[0].args[0].input;
    expect(update.ExpressionAttributeValues![':exp']).toBeGreaterThanOrEqual(now() + 12 * 3600 - 2);
    // The caller renews the browser's cookie to the same expiry.
    expect(auth?.sessionRenewedUntil).toBe(update.ExpressionAttributeValues![':exp']);
  });

  it('decides extension only by the time since the last one', () => {
    expect(needsExtension(1000, 1000 + SLIDE_INTERVAL_SECONDS)).toBe(false);
    expect(needsExtension(1000, 1001 + SLIDE_INTERVAL_SECONDS)).toBe(true);
  });
});

describe('session cache', () => {
  const token = 'a'.repeat(43);
  const session = () => ({ pk: `SESSION#${hashToken(token)}`, sk: 'SESSION', userId: 'usr_1', tenantId: 'ten_1', extendedAt: now(), expiresAt: now() + 3600 });

  it('serves a warm session request without reading what it read within SESSION_CACHE_SECONDS', async () => {
    storeSession(session());

    expect((await verifySession(token))?.user.id).toBe('usr_1');
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(2);
    expect((await verifySession(token))?.user.role).toBe('user');
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(2);
  });

  it('reads again after a logout, a change of the user, or with the cache off', async () => {
    storeSession(session());
    await verifySession(token);

    forgetSessionsOfUser('usr_1');
    await verifySession(token);
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(4);

    dynamo.on(DeleteCommand).resolves({});
    await revokeSession(hashToken(token));
    storeSession(undefined);
    expect(await verifySession(token)).toBeUndefined();

    process.env.SESSION_CACHE_SECONDS = '0';
    resetConfig();
    storeSession(session());
    await verifySession(token);
    await verifySession(token);
    delete process.env.SESSION_CACHE_SECONDS;
    expect(dynamo.commandCalls(GetCommand).length).toBe(4 + 1 + 4);
  });

  it('does not keep a session that a read in flight during its logout found', async () => {
    // The session read of a request is in flight when the logout deletes the session.
    let answerRead!: () => void;
    const readHeld = new Promise<void>((resolve) => (answerRead = resolve));
    dynamo.on(GetCommand).callsFake(async (input: { Key: { pk: string } }) => {
      if (input.Key.pk.startsWith('SESSION#')) {
        await readHeld;
        return { Item: session() };
      }
      return { Item: userItem };
    });
    dynamo.on(DeleteCommand).resolves({});
    const inFlight = verifySession(token);
    await revokeSession(hashToken(token));
    answerRead();
    await inFlight;

    storeSession(undefined);

    // The next request reads the table, where the session is gone: not the copy the racing read found.
    expect(await verifySession(token)).toBeUndefined();
  });
});

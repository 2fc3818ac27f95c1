/**
 * A change that commits late, while the client is between two connections
 * (docs/delivery-guarantees.md, the hand-off): the new connection, resuming with Last-Event-ID,
 * sends it once, at once, without an id; a replay from the first id carries the same changes.
 *
 * The server reaches DynamoDB Local through a proxy that holds one create's transaction for a
 * few seconds before it goes on to the engine: its change event is stamped before a later create
 * that commits at once, so it becomes visible behind a position the client already has.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDynamoProxy, type DynamoProxy } from '../../support/dynamo-proxy.js';
import { api } from '../../support/http.js';
import { newTenant, type TestTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from '../entities/support.js';
import { changes, openSse, type SseConnection } from './sse-client.js';

const HOLD_MS = 4000;

let proxy: DynamoProxy;
let server: TestServer;
let acme: TestTenant;
let key: string;
const open: SseConnection[] = [];

beforeAll(async () => {
  proxy = await startDynamoProxy(inject('dynamoEndpoint'));
  [server, acme] = await Promise.all([startServer({ dynamoEndpoint: proxy.url, env: { STREAM_POLL_MS: '100', STREAM_MAX_DURATION_MS: '120000' } }), newTenant()]);
  key = await keyOf(acme.admin.cookie);
}, 90_000);

afterAll(async () => {
  proxy.delay = undefined;
  for (const connection of open) connection.close();
  await server?.stop();
  await proxy?.stop();
});

async function stream(headers: Record<string, string> = {}): Promise<SseConnection> {
  const connection = await openSse(`${server.url}/api/v1/stream/tasks`, { Authorization: `Bearer ${key}`, ...headers });
  open.push(connection);
  await connection.waitFor((m) => m.data?.type === 'connected');
  return connection;
}

function create(title: string) {
  return api('POST', '/api/v1/tasks', { apiKey: key, body: { title }, baseUrl: server.url });
}

const createdIds = (connection: SseConnection) => changes(connection).map((m) => m.data.record.id as string);

describe('a change that commits late while the client reconnects', () => {
  it('reaches the client on its next connection, once, and a replay carries the same', async () => {
    // Arrange: a stream that has received one change.
    const first = await stream();
    const firstId = first.messages[0].id!;
    const before = await create('before');
    await first.waitFor((m) => m.data?.record?.id === before.body.data.id, 10_000);

    // Act: a create held on its way to the engine (stamped now, committed later) and one after
    // it that commits at once; the client has the second one's id and goes away.
    proxy.delay = (operation, body) => (operation === 'TransactWriteItems' && body.includes('held back') ? HOLD_MS : 0);
    const held = create('held back');
    await new Promise((r) => setTimeout(r, 300));
    const after = await create('after');
    const afterMessage = await first.waitFor((m) => m.data?.record?.id === after.body.data.id, 10_000);
    first.close();
    const late = await held;
    proxy.delay = undefined;
    // The first connection's hand-off is written as it closes.
    await new Promise((r) => setTimeout(r, 1000));
    const second = await stream({ 'Last-Event-ID': afterMessage.id! });
    await second.waitFor((m) => m.data?.record?.id === late.body.data.id, 10_000).catch(() => undefined);
    // Anything sent twice would arrive within a look-back round.
    await new Promise((r) => setTimeout(r, 2500));
    second.close();
    const replay = await stream({ 'Last-Event-ID': firstId });
    await replay.waitFor((m) => m.data?.record?.id === after.body.data.id, 10_000);
    replay.close();

    // Assert
    expect([before.status, late.status, after.status]).toEqual([201, 201, 201]);
    // The held change was stamped before the id the client resumed from.
    expect(afterMessage.id! > changes(replay).find((m) => m.data.record.id === late.body.data.id)!.id!).toBe(true);
    expect(createdIds(first)).toEqual([before.body.data.id, after.body.data.id]);
    expect(createdIds(second)).toEqual([late.body.data.id]);
    expect(changes(second)[0].id).toBeUndefined();
    expect([...createdIds(first), ...createdIds(second)].sort()).toEqual(createdIds(replay).sort());
  }, 60_000);
});

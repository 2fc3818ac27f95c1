/**
 * A session user's limit at its default (100 an hour) through HTTP, on a server of its own (its
 * own window length, so its counters are not shared): tokens are leased in blocks (a fraction of
 * a write per request), yet in one process the headers count down one by one and the 101st
 * request is refused, as with a counter written per request.
 */
import { GetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDynamoClient, tableName } from '../../../shared/data/client.js';
import { counterKey, windowStart } from '../../../shared/http/rate-limit.js';
import { resetConfig } from '../../../shared/config.js';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';

const WINDOW = 3597;
let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startServer({
    dynamoEndpoint: inject('dynamoEndpoint'),
    env: { RATE_LIMIT_SESSION_PER_HOUR: '100', RATE_LIMIT_WINDOW_SECONDS: String(WINDOW) },
  });
  user = await newUser((await newTenant()).admin.cookie);
});

afterAll(async () => {
  await server?.stop();
});

describe('a session user at 100 requests an hour', () => {
  it('counts down 99 … 0 in the headers, refuses the 101st with 429, and never counts past 100', async () => {
    const remaining: (string | null)[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) {
      const response = await api('GET', '/api/v1/users/me', { cookie: user.cookie, baseUrl: server.url });
      statuses.push(response.status);
      remaining.push(response.headers.get('x-ratelimit-remaining'));
      if (i === 100) expect(response.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED' });
    }

    expect(statuses).toEqual([...Array(100).fill(200), 429]);
    expect(remaining).toEqual([...Array.from({ length: 100 }, (_, i) => String(99 - i)), '0']);
    process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
    resetConfig();
    const engine = DynamoDBDocumentClient.from(createDynamoClient());
    const now = Math.floor(Date.now() / 1000);
    // The request that crossed a window boundary would find a fresh counter: read the current one.
    const item = await engine.send(new GetCommand({ TableName: tableName('limits'), Key: counterKey(`u:${user.id}`, WINDOW, windowStart(now, WINDOW)), ConsistentRead: true }));
    expect(item.Item?.n).toBe(100);
  });
});

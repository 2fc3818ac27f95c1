/**
 * Server-Timing and X-Request-Cost through HTTP on the local runtime: the timing header parses
 * per its grammar on responses of every family (successes, errors, a preflight); the cost of a
 * READ, a LIST and a CREATE equals the capacity DynamoDB reported for that request's calls, as
 * recorded by a proxy in front of DynamoDB Local; the switch turns the cost header off.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, sessionCookieOf, type CallResult } from '../../support/http.js';
import { newTenant, newUser, OPERATOR } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';

// RFC 8941-ish grammar of Server-Timing (W3C Server Timing): metric *( ";" param ), comma-separated.
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const PARAM = `${TOKEN}=(?:${TOKEN}|"(?:[^"\\\\]|\\\\.)*")`;
const METRIC = new RegExp(`^(${TOKEN})((?:\\s*;\\s*${PARAM})*)$`);

function parseServerTiming(header: string | null): Map<string, Record<string, string>> {
  expect(header, 'Server-Timing header').toBeTruthy();
  const metrics = new Map<string, Record<string, string>>();
  for (const part of header!.split(/\s*,\s*/)) {
    const match = METRIC.exec(part);
    expect(match, `metric '${part}' of '${header}'`).not.toBeNull();
    const params: Record<string, string> = {};
    for (const p of match![2].split(';').map((s) => s.trim()).filter(Boolean)) {
      const eq = p.indexOf('=');
      params[p.slice(0, eq)] = p.slice(eq + 1).replace(/^"|"$/g, '');
    }
    metrics.set(match![1], params);
  }
  return metrics;
}

function checkTiming(response: CallResult, label: string): Map<string, Record<string, string>> {
  const metrics = parseServerTiming(response.headers.get('server-timing'));
  for (const name of ['auth', 'db', 'app', 'total']) {
    expect(metrics.get(name)?.dur, `${label}: ${name}`).toMatch(/^\d+(\.\d+)?$/);
  }
  expect(metrics.get('db')!.desc, label).toMatch(/^\d+ calls?$/);
  const total = Number(metrics.get('total')!.dur);
  expect(Number(metrics.get('auth')!.dur) + Number(metrics.get('db')!.dur), label).toBeLessThanOrEqual(total + 0.2);
  expect(response.headers.get('x-request-cost'), label).toMatch(/^rcu=\d+\.\d+, wcu=\d+\.\d+$/);
  return metrics;
}

describe('Server-Timing on every family', () => {
  it('parses on responses of health, auth, keys, entities, batch, import and graphql, errors and preflights included', async () => {
    const tenant = await newTenant();
    const user = await newUser(tenant.admin.cookie);
    const cookie = user.cookie;
    const task = await api('POST', '/api/v1/tasks', { cookie, body: { title: 'Timed' } });
    const responses: [string, CallResult][] = [
      ['health', await api('GET', '/api/health')],
      ['auth me', await api('GET', '/api/v1/users/me', { cookie })],
      ['auth login refused', await api('POST', '/api/v1/auth/login', { body: { email: OPERATOR.email, password: 'wrong-password-1' } })],
      ['keys', await api('GET', '/api/v1/api-keys', { cookie })],
      ['entities create', task],
      ['entities read', await api('GET', `/api/v1/tasks/${task.body.data.id}`, { cookie })],
      ['entities list', await api('GET', '/api/v1/tasks', { cookie })],
      ['entities 404', await api('GET', '/api/v1/tasks/tsk_missing', { cookie })],
      ['entities 401', await api('GET', '/api/v1/tasks')],
      ['entities preflight', await api('OPTIONS', '/api/v1/tasks', { headers: { Origin: 'http://localhost:3000', 'Access-Control-Request-Method': 'GET' } })],
      ['batch', await api('POST', '/api/v1/batch', { cookie, body: { requests: [{ id: 'me', method: 'GET', path: '/users/me' }] } })],
      ['import', await api('POST', '/api/v1/import/tasks', { cookie, body: { tasks: [{ title: 'Imported' }] } })],
      ['graphql', await api('POST', '/api/v1/graphql', { cookie, body: { query: '{ tasks { totalCount } }' } })],
    ];
    for (const [label, response] of responses) checkTiming(response, `${label} (${response.status})`);
    // DynamoDB was asked: the read shows its calls and the read units they consumed.
    expect(Number(/^(\d+)/.exec(parseServerTiming(responses[5][1].headers.get('server-timing')).get('db')!.desc)![1])).toBeGreaterThan(0);
    expect(responses[5][1].headers.get('x-request-cost')).not.toBe('rcu=0.0, wcu=0.0');
  });
});

interface Recorded {
  rcu: number;
  wcu: number;
  calls: number;
}

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

/** A proxy in front of DynamoDB Local adding up the ConsumedCapacity of every response. */
async function capacityProxy(target: string): Promise<{ url: string; take: () => Recorded; close: () => Promise<void> }> {
  let recorded: Recorded = { rcu: 0, wcu: 0, calls: 0 };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers[name] = value;
    const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: body.length ? body : undefined });
    const text = Buffer.from(await upstream.arrayBuffer());
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    if (operation && JSON.parse(body.toString() || '{}').ReturnConsumedCapacity) {
      recorded.calls += 1;
      const consumed = upstream.ok ? JSON.parse(text.toString()).ConsumedCapacity : undefined;
      for (const entry of consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed]) {
        const units = Number(entry.CapacityUnits ?? 0);
        if (entry.ReadCapacityUnits !== undefined || entry.WriteCapacityUnits !== undefined) {
          recorded.rcu += Number(entry.ReadCapacityUnits ?? 0);
          recorded.wcu += Number(entry.WriteCapacityUnits ?? 0);
        } else if (READS.has(operation)) recorded.rcu += units;
        else recorded.wcu += units;
      }
    }
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(name)) out[name] = value;
    });
    res.writeHead(upstream.status, out);
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take: () => {
      const taken = recorded;
      recorded = { rcu: 0, wcu: 0, calls: 0 };
      return taken;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function costOf(response: CallResult): { rcu: number; wcu: number } {
  const match = /^rcu=(\d+(?:\.\d+)?), wcu=(\d+(?:\.\d+)?)$/.exec(response.headers.get('x-request-cost') ?? '');
  expect(match, response.headers.get('x-request-cost') ?? 'no X-Request-Cost').not.toBeNull();
  return { rcu: Number(match![1]), wcu: Number(match![2]) };
}

describe('X-Request-Cost', () => {
  let proxy: Awaited<ReturnType<typeof capacityProxy>>;
  let server: TestServer;
  let off: TestServer;

  beforeAll(async () => {
    proxy = await capacityProxy(inject('dynamoEndpoint'));
    [server, off] = await Promise.all([
      startServer({ dynamoEndpoint: proxy.url }),
      startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { REQUEST_COST_HEADER: 'off' } }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([server?.stop(), off?.stop()]);
    await proxy?.close();
  });

  it('of a READ, a LIST, a CREATE and a batch (its sub-requests included) equals what DynamoDB reported for that request', async () => {
    const baseUrl = server.url;
    const login = await api('POST', '/api/v1/auth/login', { baseUrl, body: OPERATOR });
    const cookie = sessionCookieOf(login)!;
    // Settle anything the login left running, then measure one request at a time.
    await new Promise((r) => setTimeout(r, 200));
    proxy.take();
    const measure = async (call: () => Promise<CallResult>) => {
      const response = await call();
      await new Promise((r) => setTimeout(r, 100));
      return { response, recorded: proxy.take() };
    };
    const create = await measure(() => api('POST', '/api/v1/tasks', { baseUrl, cookie, body: { title: 'Costed', description: 'x'.repeat(500) } }));
    expect(create.response.status, create.response.text).toBe(201);
    const read = await measure(() => api('GET', `/api/v1/tasks/${create.response.body.data.id}`, { baseUrl, cookie }));
    const list = await measure(() => api('GET', '/api/v1/tasks?limit=5', { baseUrl, cookie }));
    const id = create.response.body.data.id;
    const batch = await measure(() =>
      api('POST', '/api/v1/batch', { baseUrl, cookie, body: { requests: [{ id: 'a', method: 'GET', path: `/tasks/${id}` }, { id: 'b', method: 'GET', path: `/tasks/${id}` }] } }),
    );
    expect(batch.response.body.responses.map((r: { status: number }) => r.status)).toEqual([200, 200]);
    // The sub-requests' reads are in the batch's own figure.
    expect(costOf(batch.response).rcu).toBeGreaterThanOrEqual(2 * costOf(read.response).rcu);
    for (const [label, { response, recorded }] of Object.entries({ create, read, list, batch })) {
      expect(recorded.calls, label).toBeGreaterThan(0);
      const shown = costOf(response);
      expect(shown.rcu, label).toBeCloseTo(recorded.rcu, 2);
      expect(shown.wcu, label).toBeCloseTo(recorded.wcu, 2);
      const timing = parseServerTiming(response.headers.get('server-timing'));
      expect(timing.get('db')!.desc, label).toBe(`${recorded.calls} call${recorded.calls === 1 ? '' : 's'}`);
    }
    expect(costOf(read.response).rcu).toBeGreaterThan(0);
    expect(costOf(create.response).wcu).toBeGreaterThan(0);
  });

  it('is not sent when REQUEST_COST_HEADER is off (Server-Timing still is)', async () => {
    const response = await api('GET', '/api/health', { baseUrl: off.url });
    expect(response.headers.get('x-request-cost')).toBeNull();
    expect(response.headers.get('server-timing')).toMatch(/total;dur=/);
  });
});

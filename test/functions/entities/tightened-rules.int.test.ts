/**
 * A definition tightened after records were written, through HTTP on DynamoDB Local: records are
 * written by a server running the first definition, then read and updated by a server running
 * the second (as after a deploy). Records that break the new rules still read; an update must
 * leave them valid (422 naming each field otherwise). A unique rule added over older duplicates:
 * once the migration has run, the oldest of them holds the value, the others still update and
 * delete, and a new record with the value is refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { keyOf } from './support.js';
import { migrated } from '../../shared/migrations/support.js';

const before = {
  name: 'gauge',
  slug: 'gauges',
  tableName: 'gauges',
  idFormat: { type: 'prefixed', prefix: 'gau' },
  fields: {
    label: { type: 'string', maxLength: 100 },
    tier: { type: 'enum', values: ['a', 'b', 'c'] },
    code: { type: 'string', maxLength: 20 },
    note: { type: 'string' },
  },
  access: { public: false, shared: true },
};

const after = {
  ...before,
  fields: {
    label: { type: 'string', maxLength: 5 },
    tier: { type: 'enum', values: ['a', 'b'] },
    code: { type: 'string', maxLength: 20, unique: true },
    note: { type: 'string' },
    site: { type: 'string', required: true },
  },
};

const dirs: string[] = [];
const servers: TestServer[] = [];
let key: string;
let v2: TestServer;

async function serverWith(definition: unknown): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'entities-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'gauges.ts'), `export default ${JSON.stringify(definition)};\n`);
  // The migration runs at full speed: yielding to this test's own polling under the suite's load would outlast its wait.
  const server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ENTITIES_DIR: dir, MIGRATION_LATENCY_TOLERANCE: 'Infinity' } });
  servers.push(server);
  return server;
}

const call = (server: TestServer, method: string, path: string, body?: unknown) => api(method, path, { apiKey: key, baseUrl: server.url, ...(body !== undefined ? { body } : {}) });

let loose: { id: string };
let duplicate: { id: string };
let code: string;

beforeAll(async () => {
  const tenant = await newTenant();
  key = await keyOf(tenant.admin.cookie);
  code = `C${Date.now()}`;
  const v1 = await serverWith(before);
  const first = await call(v1, 'POST', '/api/v1/gauges', { label: 'a label far too long', tier: 'c', code });
  const second = await call(v1, 'POST', '/api/v1/gauges', { label: 'ok', tier: 'a', code });
  expect([first.status, second.status], first.text + second.text).toEqual([201, 201]);
  [loose, duplicate] = [first.body.data, second.body.data];
  await v1.stop();
  v2 = await serverWith(after);
  expect((await migrated(v2.url, 'gauges')).state).toBe('done');
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a tightened definition', () => {
  it('still reads and lists records written under the old rules', async () => {
    const read = await call(v2, 'GET', `/api/v1/gauges/${loose.id}`);
    const listed = await call(v2, 'GET', '/api/v1/gauges');

    expect(read.status, read.text).toBe(200);
    expect(read.body.data).toMatchObject({ label: 'a label far too long', tier: 'c' });
    expect(listed.body.data.map((g: { id: string }) => g.id)).toContain(loose.id);
  });

  it('refuses an update that leaves the record invalid, naming each field the new rules reject', async () => {
    const response = await call(v2, 'PATCH', `/api/v1/gauges/${loose.id}`, { note: 'only this' });

    expect(response.status).toBe(422);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(Object.keys(response.body.details).sort()).toEqual(['label', 'site', 'tier']);
    expect((await call(v2, 'GET', `/api/v1/gauges/${loose.id}`)).body.data.note).toBeUndefined();
  });

  it('accepts the update that makes the record valid', async () => {
    const response = await call(v2, 'PATCH', `/api/v1/gauges/${loose.id}`, { label: 'short', tier: 'a', site: 'ops' });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toMatchObject({ label: 'short', tier: 'a', site: 'ops' });
  });
});

describe('a unique rule added after duplicates were written', () => {
  it('lets a duplicate from before the rule be updated without changing its value', async () => {
    const response = await call(v2, 'PATCH', `/api/v1/gauges/${duplicate.id}`, { site: 'ops', note: 'kept' });

    expect(response.status, response.text).toBe(200);
    expect(response.body.data.code).toBe(code);
  });

  it('refuses a new record with the value the oldest duplicate holds', async () => {
    const refused = await call(v2, 'POST', '/api/v1/gauges', { site: 'ops', code });

    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toMatchObject({ code: 'UNIQUE_VIOLATION', details: { code: expect.any(String) } });
  });

  it('deletes a duplicate from before the rule without releasing the value another record holds', async () => {
    const deleted = await call(v2, 'DELETE', `/api/v1/gauges/${duplicate.id}`);
    const again = await call(v2, 'POST', '/api/v1/gauges', { site: 'ops', code });

    expect(deleted.status, deleted.text).toBe(200);
    expect(again.status).toBe(409);
  });
});

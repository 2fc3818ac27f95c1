/**
 * Write shards that follow the load, on `npm start` with the controller tuned for test speed (1 s
 * windows, a split after 2 s at or above 10 writes/s on the busiest key, a merge after 4 s under
 * 2.5): a burst of creates splits a quiet public entity (its definition declares no writeShards)
 * from 1 shard to 2, and the quiet that follows merges it back to 1. Two servers on one engine
 * run the controller; exactly one of them starts each change. Before, during and after each
 * change every view (default order walked by cursor, an indexed value, totals), READ by id and
 * the stream agree with a model of the data. An entity pinned at 2 shards, written as hard, is
 * never changed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { loginAsOperator, newTenant, type TestTenant } from '../../support/identity.js';
import type { TestServer } from '../../support/server.js';
import { changes, openSse, type SseConnection } from '../../functions/stream/sse-client.js';
import { definitionsDir, FAST_CONTROLLER, migrationOf, startWith, walk, type DefinitionsDir, type EntityStatus } from './support.js';

const slug = `aut${randomBytes(4).toString('hex')}`;
const pinned = `pin${randomBytes(4).toString('hex')}`;
const KINDS = ['alpha', 'beta', 'gamma'] as const;

const CONTROLLER = {
  ...FAST_CONTROLLER,
  STREAM_POLL_MS: '100',
  STREAM_MAX_DURATION_MS: '240000',
};

function definition(name: string, entitySlug: string, writeShards?: number): Record<string, unknown> {
  return {
    name,
    slug: entitySlug,
    tableName: entitySlug,
    idFormat: { type: 'uuid' },
    fields: { title: { type: 'string', required: true }, kind: { type: 'enum', values: [...KINDS], indexed: true } },
    access: { public: true, shared: true },
    ...(writeShards ? { writeShards } : {}),
  };
}

let defs: DefinitionsDir;
let dataDir: string;
const servers: TestServer[] = [];
let acme: TestTenant;
let operator: string;
const model = new Map<string, { kind: string; title: string; createdAt: string; tenant: 'acme' | 'globex' }>();
const open: SseConnection[] = [];
let stream: SseConnection;
let globex: TestTenant;

const url = () => servers[0].url;
const call = (method: string, path: string, tenant: TestTenant, body?: unknown, server = 0) => api(method, path, { cookie: tenant.admin.cookie, body, baseUrl: servers[server].url });

async function create(entity: string, tenant: TestTenant, n: number, server = 0): Promise<void> {
  const data = { title: `Poster ${n}`, kind: KINDS[n % 3] };
  const response = await call('POST', `/api/v1/${entity}`, tenant, data, server);
  expect(response.status, response.text).toBe(201);
  if (entity === slug) model.set(response.body.data.id, { kind: data.kind, title: data.title, createdAt: response.body.data.createdAt, tenant: tenant === acme ? 'acme' : 'globex' });
}

function ordered(ids: Iterable<string>): string[] {
  return [...ids].sort((a, b) => {
    const x = model.get(a)!;
    const y = model.get(b)!;
    return x.createdAt > y.createdAt ? -1 : x.createdAt < y.createdAt ? 1 : a < b ? -1 : 1;
  });
}

/** Every view against the model: the default order and one indexed value walked by cursor, their totals, and READ by id. */
async function expectViews(label: string): Promise<void> {
  const all = await walk(url(), `/api/v1/${slug}`, acme.admin.cookie, 25);
  expect(all.ids, label).toEqual(ordered(model.keys()));
  expect(new Set(all.totals), label).toEqual(new Set([model.size]));
  const beta = ordered([...model].filter(([, r]) => r.kind === 'beta').map(([id]) => id));
  const listed = await walk(url(), `/api/v1/${slug}?kind=beta`, acme.admin.cookie, 25);
  expect(listed.ids, `${label}: kind=beta`).toEqual(beta);
  expect(listed.totals[0], label).toBe(beta.length);
  const ids = [...model.keys()];
  for (const id of [ids[0], ids[Math.floor(ids.length / 2)], ids[ids.length - 1]]) {
    const read = await call('GET', `/api/v1/${slug}/${id}`, acme);
    expect(read.status, `${label}: READ ${id}`).toBe(200);
    expect(read.body.data.kind).toBe(model.get(id)!.kind);
  }
}

async function statusOf(entity: string): Promise<EntityStatus> {
  return migrationOf(url(), entity, operator);
}

/** Polls the status until `done` holds, checking the views on the way while a change is open; how many checks met it open. */
async function until(done: (s: EntityStatus) => boolean, label: string, timeoutMs = 180_000): Promise<{ status: EntityStatus; openChecks: number }> {
  const deadline = Date.now() + timeoutMs;
  let openChecks = 0;
  for (;;) {
    const status = await statusOf(slug);
    if (done(status)) return { status, openChecks };
    if (Date.now() > deadline) throw new Error(`${label}: not reached in ${timeoutMs} ms: ${JSON.stringify(status)}`);
    if (status.state !== 'done') {
      await expectViews(`${label}, ${status.state} (run ${status.run}, read ${status.writeShards.read} of ${status.writeShards.shards})`);
      openChecks += 1;
    } else await new Promise((r) => setTimeout(r, 300));
  }
}

/** The controller's decision lines with started: true, from every server's log. */
function startedDecisions(): { entity: string; action: string; from: number; to: number; timestamp: string }[] {
  return servers
    .flatMap((s) => s.output().split('\n'))
    .filter((line) => line.includes('"write shards decision"'))
    .map((line) => JSON.parse(line.slice(line.indexOf('{'))))
    .filter((line) => line.started === true)
    .sort((a, b) => (a.timestamp < b.timestamp ? -1 : 1));
}

beforeAll(async () => {
  defs = definitionsDir();
  defs.write(definition('poster', slug));
  writeFileSync(join(defs.dir, 'zz-pinned-entity.ts'), `export default ${JSON.stringify(definition('pinned', pinned, 2))};\n`);
  dataDir = mkdtempSync(join(tmpdir(), 'auto-shards-'));
  [acme, globex] = await Promise.all([newTenant(), newTenant()]);
  // The first owns DATA_DIR's webhooks, so its stream consumer counts the load; both run the controller.
  servers.push(await startWith(inject('dynamoEndpoint'), defs.dir, { ...CONTROLLER, DATA_DIR: dataDir }));
  servers.push(await startWith(inject('dynamoEndpoint'), defs.dir, { ...CONTROLLER, DATA_DIR: dataDir }));
  operator = await loginAsOperator();
  stream = await openSse(`${url()}/api/v1/stream/${slug}`, { Cookie: acme.admin.cookie });
  open.push(stream);
  await stream.waitFor((m) => m.data?.type === 'connected');
  // A quiet start: well under the threshold.
  for (let n = 0; n < 20; n++) {
    await create(slug, n % 2 ? acme : globex, n, n % 2);
    await new Promise((r) => setTimeout(r, 150));
  }
}, 180_000);

afterAll(async () => {
  for (const connection of open) connection.close();
  await Promise.all(servers.map((s) => s.stop()));
  defs?.remove();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('write shards that follow the load', () => {
  it('starts an auto entity on 1 shard, and leaves it there while the load is light', async () => {
    const status = await statusOf(slug);

    expect(status).toMatchObject({ state: 'done', writeShards: { auto: true, shards: 1, read: 1 }, trigger: null });
    await expectViews('quiet');
  });

  it('splits a quiet public entity under a burst of creates, exact throughout, and never touches the pinned one', async () => {
    const pinnedBefore = await statusOf(pinned);
    let n = 100;
    let burst = true;
    // 16 writers on both servers, on both entities, until a change of the auto entity is recorded.
    const writers = Array.from({ length: 16 }, async (_, w) => {
      while (burst) {
        const k = n++;
        await Promise.all([create(slug, k % 2 ? acme : globex, k, w % 2), create(pinned, acme, k, w % 2)]);
      }
    });
    const started = await until((s) => s.run > 0 && s.trigger?.action === 'split', 'split recorded', 90_000).finally(() => (burst = false));
    await Promise.all(writers);

    expect(started.status.trigger).toMatchObject({ by: 'write-shards controller', action: 'split', from: 1, to: 2, threshold: 10, seconds: 2 });
    expect(started.status.trigger!.lowest).toBeGreaterThanOrEqual(10);
    expect(started.status.changes).toContain('writeShards changed from 1 to 2');
    // Writes while the new shards are built, through both servers, then every view, until the change is complete.
    for (let k = 0; k < 6; k++) {
      await create(slug, acme, 5000 + k, k % 2);
      const [first] = [...model.keys()];
      const moved = await call('PATCH', `/api/v1/${slug}/${first}`, globex, { kind: 'gamma' }, k % 2);
      if (moved.status === 200) model.get(first)!.kind = 'gamma';
    }
    const split = await until((s) => s.state === 'done' && s.writeShards.shards === 2, 'split done');

    expect(split.openChecks).toBeGreaterThan(0);
    expect(split.status.writeShards).toEqual({ auto: true, shards: 2, read: 2 });
    await expectViews('split');
    const pinnedAfter = await statusOf(pinned);
    expect(pinnedAfter).toMatchObject({ run: pinnedBefore.run, writeShards: { auto: false, shards: 2 }, trigger: null });
  }, 300_000);

  it('merges back to 1 shard after the quiet span, exact throughout', async () => {
    const merged = await until((s) => s.state === 'done' && s.writeShards.shards === 1 && s.trigger?.action === 'merge', 'merged');

    expect(merged.openChecks).toBeGreaterThan(0);
    expect(merged.status.trigger).toMatchObject({ action: 'merge', from: 2, to: 1, threshold: 2.5, seconds: 4 });
    expect(merged.status.trigger!.highest).toBeLessThan(2.5);
    await expectViews('merged');
  }, 300_000);

  it('had one server, not two, start each change; and the stream sent every create once', async () => {
    const decisions = startedDecisions().filter((d) => d.entity === slug);

    expect(decisions.map((d) => `${d.action} ${d.from}→${d.to}`)).toEqual(['split 1→2', 'merge 2→1']);
    expect(startedDecisions().filter((d) => d.entity === pinned)).toEqual([]);
    const created = [...model].filter(([, r]) => r.tenant === 'acme').map(([id]) => id);
    await stream.waitFor((m) => m.data?.record?.id === ordered(created)[0], 20_000);
    const sent = changes(stream).filter((m) => String(m.data.type).endsWith('.created')).map((m) => m.data.record.id as string);
    expect([...sent].sort()).toEqual([...created].sort());
  }, 60_000);
});

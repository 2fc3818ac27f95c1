/**
 * No new duplicate while a field's uniqueness is built: 300 customers holding 60 e-mail addresses
 * (5 each), then a restart with `email` made unique, and writers racing the migration from the
 * moment the server listens until after it is done: creates and updates that set a held address,
 * creates with fresh addresses, writes that leave `email` alone. Every phase of the pass is met
 * (counting, before any page is saved, in the middle, at the switch to complete, after), and no
 * write that sets a held address is ever acknowledged; afterwards a duplicate answers 409.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { loginAsOperator, newTenant, type TestTenant } from '../../support/identity.js';
import type { TestServer } from '../../support/server.js';
import { definitionsDir, migrated, migrationOf, startWith, walk, type DefinitionsDir } from './support.js';

const slug = `cus${randomBytes(4).toString('hex')}`;
const ADDRESSES = Array.from({ length: 60 }, (_, i) => `held-${i}-${randomBytes(3).toString('hex')}@example.com`);
const HOLDERS_EACH = 5;

type Fields = Record<string, Record<string, unknown>>;
const plain: Fields = { name: { type: 'string', required: true, maxLength: 80 }, email: { type: 'string', maxLength: 254 } };
const unique: Fields = { ...plain, email: { ...plain.email, unique: true } };

function definition(fields: Fields): Record<string, unknown> {
  return { name: 'patron', slug, tableName: slug, idFormat: { type: 'prefixed', prefix: 'cus' }, fields, access: { public: false, shared: true } };
}

/** Slow enough (small pages, a pause after each) that writers meet every phase of the pass. */
const SLOW = { MIGRATION_PAGE_SIZE: '25', MIGRATION_PAUSE_MS: '150' };

let defs: DefinitionsDir;
let server: TestServer | undefined;
let tenant: TestTenant;
const holders: { id: string; email: string }[] = [];

const call = (method: string, path: string, body?: unknown) => api(method, path, { cookie: tenant.admin.cookie, body, baseUrl: server!.url });
const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  defs = definitionsDir();
  tenant = await newTenant();
  defs.write(definition(plain));
  server = await startWith(inject('dynamoEndpoint'), defs.dir);
  const bodies = ADDRESSES.flatMap((email) => Array.from({ length: HOLDERS_EACH }, (_, i) => ({ name: `holder ${i}`, email })));
  for (let i = 0; i < bodies.length; i += 10) {
    const created = await Promise.all(bodies.slice(i, i + 10).map((body) => call('POST', `/api/v1/${slug}`, body)));
    for (const [k, response] of created.entries()) {
      expect(response.status, response.text).toBe(201);
      holders.push({ id: response.body.data.id, email: bodies[i + k].email });
    }
  }
}, 240_000);

afterAll(async () => {
  await server?.stop();
  defs?.remove();
});

type Kind = 'create held' | 'update to held' | 'create fresh' | 'create without email' | 'update name';

interface Write {
  kind: Kind;
  sentAt: number;
  status: number;
  code?: string;
  retryAfter?: string | null;
  email?: string;
}

interface Seen {
  at: number;
  state: string;
  processed: number;
  total: number | null;
}

describe('a field made unique over stored duplicates', () => {
  it('never acknowledges a write that sets a value a live record holds, in any phase of the pass; afterwards duplicates answer 409', async () => {
    await server!.stop();
    defs.write(definition(unique));
    server = await startWith(inject('dynamoEndpoint'), defs.dir, SLOW);
    const operator = await loginAsOperator();
    const writes: Write[] = [];
    const timeline: Seen[] = [];
    let doneAt: number | undefined;
    let stopAt = Number.POSITIVE_INFINITY;

    const writer = async () => {
      while (Date.now() < stopAt) {
        const roll = Math.random();
        const sentAt = Date.now();
        let kind: Kind;
        let email: string | undefined;
        let response;
        if (roll < 0.45) {
          kind = 'create held';
          email = pick(ADDRESSES);
          response = await call('POST', `/api/v1/${slug}`, { name: 'newcomer', email });
        } else if (roll < 0.7) {
          kind = 'update to held';
          const holder = pick(holders);
          email = pick(ADDRESSES.filter((a) => a !== holder.email));
          response = await call('PATCH', `/api/v1/${slug}/${holder.id}`, { email });
        } else if (roll < 0.8) {
          kind = 'create fresh';
          email = `fresh-${randomBytes(5).toString('hex')}@example.com`;
          response = await call('POST', `/api/v1/${slug}`, { name: 'fresh', email });
        } else if (roll < 0.9) {
          kind = 'create without email';
          response = await call('POST', `/api/v1/${slug}`, { name: 'no email' });
        } else {
          kind = 'update name';
          response = await call('PATCH', `/api/v1/${slug}/${pick(holders).id}`, { name: `renamed ${sentAt}` });
        }
        writes.push({ kind, sentAt, status: response.status, code: response.body?.code, retryAfter: response.headers.get('retry-after'), email });
        await sleep(15);
      }
    };
    const watcher = async () => {
      while (Date.now() < stopAt) {
        const status = await migrationOf(server!.url, slug, operator);
        timeline.push({ at: Date.now(), state: status.state, processed: status.processed, total: status.total });
        if (status.state === 'done' && doneAt === undefined) {
          doneAt = Date.now();
          // Writers go on for a while after the switch.
          stopAt = doneAt + 3_000;
        }
        await sleep(100);
      }
    };

    await Promise.race([
      Promise.all([writer(), writer(), writer(), writer(), watcher()]),
      sleep(280_000).then(() => {
        stopAt = 0;
      }),
    ]);
    expect(doneAt, 'the migration finished').toBeDefined();

    // The phase each write was sent in: the last status seen before it.
    const phaseOf = (w: Write): string => {
      const seen = [...timeline].reverse().find((s) => s.at <= w.sentAt);
      if (!seen || seen.state === 'pending' || seen.total === null) return 'before';
      if (seen.state === 'done') return 'after';
      return seen.processed === 0 ? 'before' : 'middle';
    };
    const phases = new Set(writes.filter((w) => w.kind === 'create held' || w.kind === 'update to held').map(phaseOf));
    expect([...phases].sort(), 'writes of held values met every phase').toEqual(['after', 'before', 'middle']);
    const around = writes.filter((w) => Math.abs(w.sentAt - doneAt!) < 1_000 && (w.kind === 'create held' || w.kind === 'update to held'));
    expect(around.length, 'writes of held values at the switch to complete').toBeGreaterThan(0);

    // Not one write of a held value acknowledged; refusals are 409 (held, known) or 503 with Retry-After (not judged yet).
    const held = writes.filter((w) => w.kind === 'create held' || w.kind === 'update to held');
    expect(held.filter((w) => w.status < 300), 'acknowledged writes of held values').toEqual([]);
    for (const w of held) {
      expect([409, 503], JSON.stringify(w)).toContain(w.status);
      if (w.status === 503) expect(w, JSON.stringify(w)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: expect.stringMatching(/^\d+$/) });
      if (w.status === 409 && w.kind === 'create held') expect(w.code).toBe('UNIQUE_VIOLATION');
      if (phaseOf(w) === 'after' && w.sentAt > doneAt!) expect(w.status, JSON.stringify(w)).toBe(409);
    }
    // Writes that set no new value of email go through in every phase; none answered 500.
    const alone = writes.filter((w) => w.kind === 'create without email' || w.kind === 'update name');
    expect(alone.length).toBeGreaterThan(0);
    expect(alone.filter((w) => w.status >= 300 && w.code !== 'CONFLICT'), 'writes leaving email alone').toEqual([]);
    expect(writes.filter((w) => w.status >= 500 && w.status !== 503)).toEqual([]);
    // A fresh value is refused (503) only while the uniqueness is built, and taken once it is complete.
    const fresh = writes.filter((w) => w.kind === 'create fresh');
    expect(fresh.filter((w) => ![201, 503].includes(w.status))).toEqual([]);
    expect(fresh.filter((w) => w.sentAt > doneAt! && w.status !== 201)).toEqual([]);

    // Every held address is still held by its 5 records, and by no other.
    const all = await walk(server!.url, `/api/v1/${slug}`, tenant.admin.cookie, 100);
    const count = new Map<string, number>();
    for (const r of all.records) if (typeof r.email === 'string') count.set(r.email, (count.get(r.email) ?? 0) + 1);
    for (const address of ADDRESSES) expect(count.get(address), address).toBe(HOLDERS_EACH);
    const status = await migrated(server!.url, slug);
    expect(status.report.count).toBe(ADDRESSES.length * (HOLDERS_EACH - 1));

    // After the migration: a duplicate of a held or a freshly taken value answers 409.
    const duplicate = await call('POST', `/api/v1/${slug}`, { name: 'late', email: ADDRESSES[0] });
    expect(duplicate.status, duplicate.text).toBe(409);
    expect(duplicate.body.code).toBe('UNIQUE_VIOLATION');
    const taken = fresh.find((w) => w.status === 201)!;
    expect((await call('POST', `/api/v1/${slug}`, { name: 'late', email: taken.email })).status).toBe(409);
  }, 360_000);
});

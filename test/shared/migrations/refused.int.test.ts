/**
 * Definition changes no migration carries out refuse the start, before anything is recorded, and
 * say what to do instead: a field added again while the migration purging its earlier values is
 * under way (those values would show), and the access mode of an entity with stored records. An
 * access change of an entity with no records goes through, the write shards of a private entity with
 * stored records are migrated as a public one's, and kept when its definition leaves them to the controller.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { loginAsOperator, newTenant, type TestTenant } from '../../support/identity.js';
import type { TestServer } from '../../support/server.js';
import { definitionsDir, migrated, migrationOf, startWith, walk, type DefinitionsDir } from './support.js';

const slug = `nts${randomBytes(4).toString('hex')}`;
const emptySlug = `emp${randomBytes(4).toString('hex')}`;
const publicSlug = `pub${randomBytes(4).toString('hex')}`;

type Fields = Record<string, Record<string, unknown>>;
const withNotes: Fields = { number: { type: 'string', required: true }, notes: { type: 'string' } };
const { notes: _notes, ...withoutNotes } = withNotes;

function definition(fields: Fields, access = { public: false, shared: false }, writeShards?: number): Record<string, unknown> {
  return { name: 'note', slug, tableName: slug, idFormat: { type: 'prefixed', prefix: 'nts' }, fields, access, ...(writeShards ? { writeShards } : {}) };
}

/** A public entity, declaring `writeShards` or (undefined) taking the default. */
function publicDefinition(writeShards?: number): Record<string, unknown> {
  return { name: 'poster', slug: publicSlug, tableName: publicSlug, idFormat: { type: 'uuid' }, fields: { title: { type: 'string' } }, access: { public: true, shared: true }, ...(writeShards ? { writeShards } : {}) };
}

let defs: DefinitionsDir;
let server: TestServer | undefined;
let tenant: TestTenant;
const ids: string[] = [];

/** A start with `fields` (and the entity without records at `emptyAccess`); rejects when the server does not start. */
async function restart(
  fields: Fields,
  env: Record<string, string> = {},
  access?: { public: boolean; shared: boolean },
  emptyAccess = { public: false, shared: false },
  shards: { own?: number; public?: number } = { public: 1 },
): Promise<void> {
  await server?.stop();
  server = undefined;
  defs.write(definition(fields, access, shards.own));
  writeFileSync(join(defs.dir, 'zz-public-entity.ts'), `export default ${JSON.stringify(publicDefinition(shards.public))};\n`);
  writeFileSync(join(defs.dir, 'zz-empty-entity.ts'), `export default ${JSON.stringify({ name: 'empty', slug: emptySlug, tableName: emptySlug, idFormat: { type: 'uuid' }, fields: { title: { type: 'string' } }, access: emptyAccess })};\n`);
  server = await startWith(inject('dynamoEndpoint'), defs.dir, env);
}

/** A start that must be refused: the server exits, and what it printed. */
async function refusedStart(
  fields: Fields,
  access?: { public: boolean; shared: boolean },
  shards?: { own?: number; public?: number },
  emptyAccess?: { public: boolean; shared: boolean },
): Promise<string> {
  const error = await restart(fields, {}, access, emptyAccess, shards).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(error, 'the start was refused').toBeInstanceOf(Error);
  return error!.message;
}

const call = (method: string, path: string, body?: unknown) => api(method, path, { cookie: tenant.admin.cookie, body, baseUrl: server!.url });

beforeAll(async () => {
  defs = definitionsDir();
  tenant = await newTenant();
  await restart(withNotes);
  for (let i = 0; i < 12; i++) {
    const response = await call('POST', `/api/v1/${slug}`, { number: `n-${i}`, notes: `old note ${i}` });
    expect(response.status, response.text).toBe(201);
    ids.push(response.body.data.id);
  }
  expect((await call('POST', `/api/v1/${publicSlug}`, { title: 'stored unsharded' })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  defs?.remove();
});

describe('definition changes a start refuses', () => {
  it('refuses a field added again before the purge of its old values finished, and shows none of them once it did', async () => {
    // A purge that stops after its first page (and is cut off there).
    await restart(withoutNotes, { MIGRATION_PAUSE_MS: '600000', MIGRATION_PAGE_SIZE: '1' });
    const operator = await loginAsOperator();
    let status = await migrationOf(server!.url, slug, operator);
    while (status.state === 'pending') {
      await new Promise((r) => setTimeout(r, 100));
      status = await migrationOf(server!.url, slug, operator);
    }
    expect(status.state).toBe('running');
    expect(status.changes).toContain('field removed: notes');
    await server!.kill();
    server = undefined;

    const message = await refusedStart(withNotes);

    expect(message).toContain(`Entity ${slug}: 'notes' was removed, and the migration purging the values stored before has not finished`);
    expect(message).toContain('Start without it until the migration is done');
    // Nothing was recorded. A start without the field and with a change that needs no pass of its
    // own (a searchable field) makes a new run, which does not cut the purge short: a whole pass.
    await restart({ ...withoutNotes, number: { ...withoutNotes.number, searchable: true } });
    const purged = await migrated(server!.url, slug);
    expect(purged).toMatchObject({ state: 'done', run: status.run + 1 });
    expect(purged.changes).toEqual(['searchable fields: number']);
    expect(purged.processed).toBeGreaterThanOrEqual(ids.length);

    await restart(withNotes);
    expect((await migrated(server!.url, slug)).state).toBe('done');
    for (const id of ids) {
      const read = await call('GET', `/api/v1/${slug}/${id}`);
      expect(read.status).toBe(200);
      expect(read.body.data, `READ ${id}`).not.toHaveProperty('notes');
    }
    const listed = await walk(server!.url, `/api/v1/${slug}`, tenant.admin.cookie);
    expect(listed.records.filter((r) => 'notes' in r)).toEqual([]);
    const filtered = await walk(server!.url, `/api/v1/${slug}?notes=${encodeURIComponent('old note 3')}`, tenant.admin.cookie);
    expect(filtered.ids).toEqual([]);
    expect(filtered.totals).toEqual([0]);
    const written = await call('PATCH', `/api/v1/${slug}/${ids[0]}`, { notes: 'new note' });
    expect(written.status, written.text).toBe(200);
    expect((await call('GET', `/api/v1/${slug}/${ids[0]}`)).body.data.notes).toBe('new note');
  }, 300_000);

  it('refuses an access change of an entity with stored records, saying what to do, and keeps serving them as they were', async () => {
    const message = await refusedStart(withNotes, { public: false, shared: true });

    expect(message).toContain(`Entity ${slug}: changing access from private (owner views) to shared is not supported while records are stored`);
    expect(message).toContain('Restore access to private (owner views)');
    expect(message).toContain(`npm run admin -- export ${slug}`);
    await restart(withNotes);
    const status = await migrationOf(server!.url, slug);
    expect(status.layout.access).toEqual({ public: false, shared: false });
    const listed = await walk(server!.url, `/api/v1/${slug}`, tenant.admin.cookie);
    expect(listed.ids.sort()).toEqual([...ids].sort());
    expect(listed.totals[0]).toBe(ids.length);
  }, 300_000);

  it('changes the access of an entity with no records', async () => {
    await restart(withNotes, {}, undefined, { public: false, shared: true });

    const status = await migrated(server!.url, emptySlug);

    expect(status.state).toBe('done');
    expect(status.layout.access).toEqual({ public: false, shared: true });
    const created = await call('POST', `/api/v1/${emptySlug}`, { title: 'first' });
    expect(created.status, created.text).toBe(201);
    const listed = await walk(server!.url, `/api/v1/${emptySlug}`, tenant.admin.cookie);
    expect(listed.ids).toEqual([created.body.data.id]);
  }, 300_000);

  it('migrates a writeShards change of a private entity with stored records: every record listed and read by id as before', async () => {
    // (The entity without records is shared since the test before.)
    await restart(withNotes, { MIGRATION_SWITCH_MS: '500' }, undefined, { public: false, shared: true }, { own: 4, public: 1 });
    const done = await migrated(server!.url, slug);

    expect(done.layout.writeShards).toBe(4);
    const listed = await walk(server!.url, `/api/v1/${slug}`, tenant.admin.cookie);
    expect(listed.ids.sort()).toEqual([...ids].sort());
    for (const id of [ids[0], ids[ids.length - 1]]) expect((await call('GET', `/api/v1/${slug}/${id}`)).status).toBe(200);
  }, 300_000);

  it("keeps the write shards a public entity has when its definition stops pinning them ('auto': the controller chooses from then on)", async () => {
    await restart(withNotes, { MIGRATION_SWITCH_MS: '500' }, undefined, { public: false, shared: true }, { public: 4 });
    const pinned = await migrated(server!.url, publicSlug);
    expect(pinned.layout.writeShards).toBe(4);

    await restart(withNotes, {}, undefined, { public: false, shared: true }, { public: undefined });
    const status = await migrationOf(server!.url, publicSlug);

    expect(status).toMatchObject({ state: 'done', run: pinned.run, writeShards: { auto: true, shards: 4, read: 4 } });
    expect(status.layout.writeShards).toBe(4);
    const listed = await walk(server!.url, `/api/v1/${publicSlug}`, tenant.admin.cookie);
    expect(listed.totals[0]).toBe(1);
  }, 300_000);
});

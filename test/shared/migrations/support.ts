/**
 * Restarting the local API with changed entity definitions on one engine: a directory of
 * definition files (the built-in ones and a test entity of our own, rewritten between starts)
 * handed to the server as ENTITIES_DIR, and a model of the records to check every view against.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { api } from '../../support/http.js';
import { loginAsOperator } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';


export interface DefinitionsDir {
  dir: string;
  write(definition: Record<string, unknown>): void;
  remove(): void;
}

/** A directory for the test's entity (ENTITIES_DIR adds its files to the built-in definitions). */
export function definitionsDir(): DefinitionsDir {
  const dir = mkdtempSync(join(tmpdir(), 'entities-'));
  return {
    dir,
    write: (definition) => writeFileSync(join(dir, 'zz-test-entity.ts'), `export default ${JSON.stringify(definition, null, 2)};\n`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The records and change events tables of this test file's servers (tenants and users stay in the
 * suite's tables). A migration pass scans the whole records table: on the suite's, its length
 * would depend on how much the files run before it stored, and the pages and pauses chosen to
 * keep a migration under way during the checks would mean nothing.
 */
export const OWN_TABLES: Readonly<Record<string, string>> = (() => {
  const suffix = randomBytes(4).toString('hex');
  return { TABLE_RECORDS: `migrations-${suffix}-records`, TABLE_EVENTS: `migrations-${suffix}-events`, TABLE_HISTORY: `migrations-${suffix}-history` };
})();

export async function startWith(dynamoEndpoint: string, dir: string, env: Record<string, string> = {}): Promise<TestServer> {
  // These tests check what a migration does, not how it yields to the API (pace.test.ts does):
  // under the suite's load, yielding to their polling would outlast their waits.
  return startServer({ dynamoEndpoint, env: { ENTITIES_DIR: dir, MIGRATION_LATENCY_TOLERANCE: 'Infinity', ...OWN_TABLES, ...env } });
}

/**
 * The write-shards controller tuned for test speed (its thresholds by configuration): a burst of
 * a few creates a second splits an entity within seconds, a few quiet seconds merge it back.
 */
export const FAST_CONTROLLER: Readonly<Record<string, string>> = {
  SHARDS_WINDOW_SECONDS: '1',
  SHARDS_CHECK_SECONDS: '1',
  SHARDS_SPLIT_AT_PERCENT: '4',
  SHARDS_SPLIT_AFTER_SECONDS: '2',
  SHARDS_MERGE_BELOW_PERCENT: '1',
  SHARDS_MERGE_AFTER_SECONDS: '4',
  SHARDS_MERGE_CHECK_SECONDS: '1',
  // The settle before a change's pass, and before the purge of the earlier shards: longer than a
  // busy server serves a state it read (5 s between reads), or another server's writes made on the
  // layout before the change could miss the pass.
  MIGRATION_SWITCH_MS: '10000',
  LOG_LEVEL: 'INFO',
};

export interface EntityStatus {
  entity: string;
  state: string;
  run: number;
  processed: number;
  total: number | null;
  added: number;
  startedAt: string | null;
  endedAt: string | null;
  changes: string[];
  indexes: { field: string; token: string; ready: boolean }[];
  sums: { field: string; token: string; by?: 'day'; ready: boolean }[];
  uniques: { field: string; ready: boolean }[];
  report: { count: number; entries: { kind: string; recordId: string; field: string; detail: string; keptId?: string }[] };
  layout: Record<string, unknown> & { hash: string };
  writeShards: { auto: boolean; shards: number; read: number };
  trigger: { action: string; from: number; to: number; rate: number; lowest: number; highest: number; threshold: number; seconds: number; reason: string } | null;
}

export async function migrationOf(url: string, slug: string, operator?: string): Promise<EntityStatus> {
  const cookie = operator ?? (await loginAsOperator());
  const response = await api('GET', '/api/v1/migrations', { cookie, baseUrl: url });
  expect(response.status).toBe(200);
  const found = (response.body.data as EntityStatus[]).find((s) => s.entity === slug);
  if (!found) throw new Error(`no migration state for ${slug}: ${response.text}`);
  return found;
}

/** Waits until the entity's migration is done (or failed), and returns its status. */
export async function migrated(url: string, slug: string, timeoutMs = 120_000): Promise<EntityStatus> {
  const operator = await loginAsOperator();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await migrationOf(url, slug, operator);
    if (status.state === 'done' || status.state === 'failed') return status;
    if (Date.now() > deadline) throw new Error(`migration of ${slug} not done in ${timeoutMs} ms: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Until the entity's migration is done (at most `rounds` rounds): `seen` looks at the status, `race`
 * writes against the pass, then `check` asks what the pass builds and returns the sources of the
 * answers, each 'scan' while the pass still runs. Returns how many checks the pass was running for.
 */
export async function checkedWhileMigrating(
  url: string,
  slug: string,
  steps: { seen: (status: EntityStatus) => void; race: (round: number) => Promise<void>; check: () => Promise<Set<string>> },
  rounds = 40,
): Promise<number> {
  const operator = await loginAsOperator();
  let during = 0;
  for (let round = 0; round < rounds; round++) {
    const before = await migrationOf(url, slug, operator);
    if (before.state === 'done') break;
    steps.seen(before);
    await steps.race(round);
    const sources = await steps.check();
    if ((await migrationOf(url, slug, operator)).state !== 'done') {
      expect([...sources]).toEqual(['scan']);
      during += 1;
    }
  }
  return during;
}

export interface ModelRecord {
  id: string;
  owner: string;
  data: Record<string, unknown>;
}

/** Every record of a LIST walked by cursor (each page `limit`), with the totals each page stated. */
export async function walk(url: string, path: string, cookie: string, limit = 7): Promise<{ ids: string[]; records: Record<string, unknown>[]; totals: number[] }> {
  const records: Record<string, unknown>[] = [];
  const totals: number[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const response: { status: number; text: string; body: any } = await api("GET", `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { cookie, baseUrl: url });
    expect(response.status, response.text).toBe(200);
    records.push(...response.body.data);
    totals.push(response.body.pagination.total);
    cursor = response.body.pagination.nextCursor;
    if (!cursor) break;
  }
  return { ids: records.map((r) => String(r.id)), records, totals };
}

export function sorted(ids: Iterable<string>): string[] {
  return [...ids].sort();
}

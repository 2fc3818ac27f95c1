/**
 * `npm run migrate`: each entity's layout and migration state (pending, running, done, failed),
 * records processed of the total at its start (and those created during it, apart), start and
 * end, what changed, unique fields and indexes still being built, and the report.
 * `npm run migrate -- --wait` blocks until every migration is done (exit 1 if one failed).
 * `--json` prints the status as JSON.
 *
 * Which database: DYNAMODB_ENDPOINT when set; otherwise the engine a running `npm start` uses for
 * DATA_DIR (it leaves its endpoint there). With neither, this command starts the engine on
 * DATA_DIR itself, records the definitions' layouts as `npm start` would, and with --wait runs the
 * migrations to their end in the foreground.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { resetConfig } from '../shared/config.js';
import { allEntities, loadRegistry } from '../shared/registry/index.js';
import { migrationStatus, type MigrationStatus } from '../shared/migrations/status.js';
import { startDynamoLocal, type DynamoLocal } from '../infra/local/dynamodb-local.js';
import { ENGINE_ENDPOINT_FILE } from '../infra/local/server.js';
import { ensureTables } from '../infra/local/tables.js';
import { createDynamoClient } from '../shared/data/client.js';
import { prepareMigrations, startMigrations } from '../infra/local/migrations.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const args = new Set(process.argv.slice(2));
const wait = args.has('--wait');
const json = args.has('--json');

async function answers(endpoint: string): Promise<boolean> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

/** `processed of total`, and the records created during the pass apart (never above the total they were not part of). */
function progressOf(s: Pick<MigrationStatus, 'processed' | 'total' | 'added'>): string {
  const of = s.total === null ? `${s.processed}` : `${s.processed} of ${s.total}`;
  return s.added ? `${of} (+${s.added} created during the pass)` : of;
}

function print(statuses: MigrationStatus[]): void {
  if (json) {
    console.log(JSON.stringify(statuses, null, 2));
    return;
  }
  for (const s of statuses) {
    const progress = progressOf(s);
    console.log(`${s.entity.padEnd(16)} ${s.state.padEnd(8)} layout ${s.layout.hash}  records ${progress}  started ${s.startedAt ?? '-'}  ended ${s.endedAt ?? '-'}`);
    for (const change of s.changes) console.log(`    change: ${change}`);
    const building = s.indexes.filter((i) => !i.ready);
    if (building.length) console.log(`    indexes being built (not read yet): ${building.map((i) => i.field).join(', ')}`);
    const uniques = s.uniques.filter((u) => !u.ready);
    if (uniques.length) console.log(`    uniqueness being built (a new value is refused with 503 meanwhile): ${uniques.map((u) => u.field).join(', ')}`);
    if (s.error) console.log(`    error: ${s.error}`);
    if (s.report.count) {
      console.log(`    report: ${s.report.count} record(s)`);
      for (const e of s.report.entries.slice(0, 20)) {
        console.log(`      ${e.kind} ${e.recordId} ${e.field}: ${e.detail}${e.keptId ? ` (kept by ${e.keptId})` : ''}`);
      }
    }
  }
}

async function main(): Promise<void> {
  const dataDir = resolve(process.env.DATA_DIR || '.data');
  let endpoint = process.env.DYNAMODB_ENDPOINT || process.env.AWS_ENDPOINT_URL_DYNAMODB || undefined;
  const file = join(dataDir, ENGINE_ENDPOINT_FILE);
  if (!endpoint && existsSync(file)) {
    const found = readFileSync(file, 'utf8').trim();
    if (await answers(found)) endpoint = found;
  }
  let engine: DynamoLocal | undefined;
  if (!endpoint) {
    engine = await startDynamoLocal({ dataDir });
    endpoint = engine.endpoint;
  }
  process.env.DYNAMODB_ENDPOINT = endpoint;
  resetConfig();
  try {
    await loadRegistry();
    if (engine) {
      // Nothing else serves this DATA_DIR: record the definitions' layouts as `npm start` would.
      const client = createDynamoClient();
      await ensureTables(client);
      client.destroy();
      const states = await prepareMigrations();
      if (wait) await startMigrations(states).idle;
    }
    for (;;) {
      const statuses = await migrationStatus(allEntities(), 20);
      const open = statuses.filter((s) => s.state === 'pending' || s.state === 'running');
      if (!wait || open.length === 0) {
        print(statuses);
        if (statuses.some((s) => s.state === 'failed')) process.exitCode = 1;
        return;
      }
      if (!json) console.log(open.map((s) => `${s.entity}: ${s.state} ${progressOf(s)}`).join('; '));
      await new Promise((r) => setTimeout(r, 2000));
    }
  } finally {
    await engine?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(`migrate: ${(error as Error).message}`);
  process.exit(1);
});

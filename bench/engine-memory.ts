/**
 * Sizes DynamoDB Local's heap: starts the engine as `npm start` does (persisted, DYNAMODB_LOCAL_HEAP
 * or the default -Xmx), seeds RECORDS records (default 100,000) into the records table with
 * BatchWriteItem in parallel, reads them (Scan pages of up to 1 MB, 8 at a time, and Queries), and
 * prints the engine's resident memory after each step. (A full Scan of 100,000 items page by page
 * takes DynamoDB Local many minutes: each page starts over from the beginning of the table.)
 *
 *   npx tsx bench/engine-memory.ts                       # the default heap, 100,000 records
 *   DYNAMODB_LOCAL_HEAP=256m RECORDS=100000 npx tsx bench/engine-memory.ts
 */
import { BatchWriteItemCommand, DynamoDBClient, QueryCommand, ScanCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const RECORDS = Number(process.env.RECORDS ?? 100_000);
const PARALLEL = 8;

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024);
}

/** A record as the API keeps it: its key, its entity, tenant, timestamps and about 600 bytes of fields. */
function record(i: number) {
  const id = `rec_${i.toString(36).padStart(8, '0')}${randomBytes(4).toString('hex')}`;
  return {
    pk: { S: `TENANT#ten_bench#ENTITY#contacts` },
    sk: { S: `RECORD#${id}` },
    id: { S: id },
    tenantId: { S: 'ten_bench' },
    entity: { S: 'contacts' },
    createdAt: { S: new Date(Date.now() - i * 1000).toISOString() },
    updatedAt: { S: new Date().toISOString() },
    version: { N: '1' },
    data: {
      M: {
        name: { S: `Contact ${i}` },
        email: { S: `contact${i}@example.com` },
        status: { S: ['active', 'inactive', 'lead'][i % 3] },
        notes: { S: randomBytes(220).toString('base64') },
        score: { N: String(i % 1000) },
      },
    },
  };
}

async function main(): Promise<void> {
  const { startDynamoLocal, engineHeap } = await import('../infra/local/dynamodb-local.js');
  const { ensureTables } = await import('../infra/local/tables.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'engine-memory-'));
  const engine = await startDynamoLocal({ dataDir });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  const { config, resetConfig } = await import('../shared/config.js');
  resetConfig();
  const client = new DynamoDBClient({ endpoint: engine.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const pid = engine.pid()!;
  const report = (step: string) => console.log(`${step.padEnd(34)} engine RSS ${rssMiB(pid)} MiB`);
  try {
    await ensureTables(client);
    const table = config().tables.records;
    console.log(`heap -Xmx${engineHeap()}, ${RECORDS} records into ${table}`);
    report('started, tables created');
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        for (;;) {
          const from = next;
          next += 25;
          if (from >= RECORDS) return;
          let requests: WriteRequest[] = [];
          for (let i = from; i < Math.min(from + 25, RECORDS); i++) requests.push({ PutRequest: { Item: record(i) } });
          while (requests.length) {
            const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
            requests = out.UnprocessedItems?.[table] ?? [];
          }
          if (from % 20_000 === 0 && from) report(`${from} records`);
        }
      }),
    );
    report(`${RECORDS} records (${Math.round((Date.now() - started) / 1000)} s)`);
    // 8 Scans at once, each 5 pages of up to 1 MB: several pages in memory together, as when the
    // API's LISTs and imports run side by side.
    let scanned = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        let key: Record<string, never> | undefined;
        for (let page = 0; page < 5; page++) {
          const out = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: key }));
          scanned += out.Count ?? 0;
          key = out.LastEvaluatedKey as typeof key;
          if (!key) break;
        }
      }),
    );
    report(`8 × 5 scan pages (${scanned} items)`);
    for (let i = 0; i < 200; i++) {
      await client.send(new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'TENANT#ten_bench#ENTITY#contacts' } }, Limit: 100 }));
    }
    report('200 queries of 100');
  } finally {
    client.destroy();
    await engine.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

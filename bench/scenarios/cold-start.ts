/**
 * Cold start of each family, measured on the bundles a deploy uploads: `npx cdk synth` into a
 * temporary directory, then for each family function of the template its bundle's size (all of
 * its code, and what is read when it loads: index.mjs and the chunks it imports statically) and
 * the time to import it in a fresh `node` process (median of COLD_START_RUNS, default 9), with
 * the function's synthesized environment. Beside them, in the same run, a hello-world middy
 * handler bundled with the same esbuild options: the floor any bundle starts from, imported
 * in turns with each family (a fresh process each, one then the other), so that a ratio compares
 * the two under the same load. The targets were set where that hello-world imports in 4.7 ms; a
 * figure meets its target when its ratio to the hello-world imports it took turns with is at
 * most target / 4.7 (the absolute target is shown too).
 *
 * What a bundle loads on first use is not gone, only moved: the same fresh process then runs one
 * request through the handler (a session cookie that DynamoDB does not know, so authentication
 * loads the session code and the AWS SDK, makes one GetItem and answers 401), with DynamoDB
 * played by a local HTTP server that answers `{}` at once. That figure is the import plus the
 * first request as far as authentication. The webhooks family's event-source consumers (fan-out,
 * delivery) are measured the same way, their first invocation an empty batch.
 *
 * Also: the entities bundle imported with NODE_OPTIONS=--enable-source-maps (how it was deployed
 * before), which shows what reading the source maps only when a stack is printed saves.
 *
 * The temporary directory is outside the project, so a bundle that imports a module it left out
 * (the health function leaves the AWS SDK to the Lambda runtime) at load fails here loudly.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { CONSUMER_FUNCTIONS, familyBundles, functionBundles, type FamilyBundle } from '../../infra/aws/bundles.js';
import { PROJECT_ROOT, REQUIRE_SHIM } from '../../infra/aws/functions.js';
import { families } from '../../shared/routes.js';
import { round } from '../stats.js';
import type { BenchRow } from '../types.js';

export const order = 5;
export const usesLocal = false;

const STACK = 'EntityRecordApi';
const RUNS = Number(process.env.COLD_START_RUNS ?? 9) || 9;

/** Targets of the import time (ms) and the bundle size (kB), set where hello-world imports in REFERENCE_HELLO_MS. */
const IMPORT_TARGET_MS: Record<string, number> = { health: 10, entities: 35, auth: 35, keys: 35, import: 35, graphql: 50 };
const SIZE_TARGET_KB: Record<string, number> = { health: 120 };
const REFERENCE_HELLO_MS = 4.7;

/**
 * The first request of each family: a route of its own (every one reaches authentication). Not
 * health's: its SDK is the Lambda runtime's, which a bundle outside Lambda cannot import. Not
 * the stream's: a streamed response needs Lambda's response stream, which the stand-in below
 * leaves out.
 */
const FIRST_REQUEST: Record<string, { method: string; path: string; resource?: string }> = {
  auth: { method: 'GET', path: '/api/v1/users/me' },
  keys: { method: 'GET', path: '/api/v1/keys' },
  entities: { method: 'GET', path: '/api/v1/tasks', resource: '/api/v1/{entity}' },
  import: { method: 'POST', path: '/api/v1/import/tasks' },
  graphql: { method: 'POST', path: '/api/v1/graphql' },
  upload: { method: 'GET', path: '/api/v1/uploads' },
  webhooks: { method: 'GET', path: '/api/v1/webhooks' },
};

/** The first invocation of an event-source consumer: an empty batch, which loads its code and creates its clients. */
const EMPTY_BATCH = JSON.stringify({ Records: [] });

/**
 * Imports one bundle and prints the time it took; with a request (argv[2], JSON), then runs it
 * through the handler and prints the time of both. Lambda's Node runtime provides the
 * `awslambda` global that streaming handlers wrap themselves with; plain node does not, so a
 * stand-in of its two members is set first (it is not timed).
 */
const IMPORT_SCRIPT = [
  'globalThis.awslambda ??= { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };',
  'const t = performance.now(); const { handler } = await import(process.argv[1]); const imported = performance.now() - t;',
  'if (!process.argv[2]) { process.stdout.write(String(imported)); } else {',
  '  const result = await handler(JSON.parse(process.argv[2]), { getRemainingTimeInMillis: () => 29000, awsRequestId: "cold-start" });',
  '  process.stdout.write(JSON.stringify({ imported, total: performance.now() - t, status: result.statusCode ?? JSON.stringify(result) }));',
  '}',
].join('\n');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function childEnv(environment: Record<string, string>, nodeOptions = ''): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: 'cold-start-bench',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    LOG_LEVEL: 'SILENT',
    ...environment,
    NODE_OPTIONS: nodeOptions,
  };
}

/**
 * Runs IMPORT_SCRIPT on `file` in a fresh process: its output. Without blocking this process,
 * whose DynamoDB stand-in must answer the first requests.
 */
function runChild(file: string, env: Record<string, string>, args: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', IMPORT_SCRIPT, file, ...args], { env, encoding: 'utf8', cwd: path.dirname(file), timeout: 60_000 }, (error, stdout, stderr) => {
      // The minified source line Node prints first says nothing: keep the message and the stack.
      if (error) reject(new Error(`running ${file} failed: ${stderr.split('\n').filter((line) => line.length < 400).join('\n').slice(0, 2000)}`));
      else resolve(stdout);
    });
  });
}

/** Median import time of `file` over RUNS fresh processes. */
async function importTime(file: string, environment: Record<string, string>, nodeOptions = ''): Promise<number> {
  const env = childEnv(environment, nodeOptions);
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(Number(await runChild(file, env)));
  return median(samples);
}

/**
 * Median import times of `file` and of the hello-world bundle, their fresh processes taking
 * turns: on a shared machine whose load changes during the run, the ratio compares the two
 * under the same load.
 */
async function importTimeBeside(file: string, environment: Record<string, string>, hello: string, helloSamples: number[]): Promise<{ ms: number; helloMs: number }> {
  const env = childEnv(environment);
  const helloEnv = childEnv({});
  const samples: number[] = [];
  const besideHello: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    besideHello.push(Number(await runChild(hello, helloEnv)));
    samples.push(Number(await runChild(file, env)));
  }
  helloSamples.push(...besideHello);
  return { ms: median(samples), helloMs: median(besideHello) };
}

/** An API Gateway proxy event of `request`, with a well-formed session cookie nobody issued. */
function firstEvent(request: { method: string; path: string; resource?: string }): string {
  return JSON.stringify({
    resource: request.resource ?? request.path,
    path: request.path,
    httpMethod: request.method,
    headers: { Cookie: `session=${'c'.repeat(43)}`, 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: request.resource ? { entity: request.path.split('/').pop() } : null,
    stageVariables: null,
    body: request.method === 'POST' ? '{}' : null,
    isBase64Encoded: false,
    requestContext: { requestId: 'cold-start', stage: 'prod', identity: { sourceIp: '127.0.0.1' } },
  });
}

/** Median of import + first request (or `event`) over RUNS fresh processes; the status the request got (a consumer: its answer). */
async function firstRequestTime(file: string, environment: Record<string, string>, event: string, dynamoEndpoint: string): Promise<{ ms: number; status: number | string }> {
  const env = childEnv({ ...environment, DYNAMODB_ENDPOINT: dynamoEndpoint });
  const samples: number[] = [];
  let status: number | string = 0;
  for (let i = 0; i < RUNS; i++) {
    const out = JSON.parse(await runChild(file, env, [event])) as { total: number; status: number | string };
    samples.push(out.total);
    status = out.status;
  }
  return { ms: median(samples), status };
}

/** DynamoDB as far as these requests need it: `{}` (no item, table described) to every call. */
async function emptyDynamo(): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-RequestId': 'cold-start' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * The rows of one bundle: its size, its import time beside hello-world's, and (when measured)
 * the import and first request; with targets of the size and of the import time if it has them.
 */
function bundleRows(
  name: string,
  bundle: FamilyBundle,
  beside: { ms: number; helloMs: number },
  first: { ms: number; note: string } | undefined,
  targets: { kb?: number; ms?: number } = {},
): BenchRow[] {
  const scenario = `cold start: ${name}`;
  const kb = bundle.bytes / 1024;
  const { ms, helloMs } = beside;
  const ratio = ms / helloMs;
  const targetRatio = targets.ms !== undefined ? targets.ms / REFERENCE_HELLO_MS : undefined;
  return [
    {
      scenario,
      metric: 'bundle',
      value: round(kb, 1),
      unit: 'kB',
      ...(targets.kb !== undefined ? { target: `≤ ${targets.kb} kB`, pass: kb <= targets.kb } : {}),
      note: `${round(bundle.loadBytes / 1024, 1)} kB read at load (index.mjs and the chunks it imports)`,
    },
    {
      scenario,
      metric: 'import',
      value: round(ms, 1),
      unit: 'ms',
      ...(targetRatio !== undefined ? { target: `≤ ${targets.ms} ms at hello-world ${REFERENCE_HELLO_MS} ms: ≤ ${round(targetRatio, 1)}× hello-world`, pass: ratio <= targetRatio } : {}),
      note: `${round(ratio, 2)}× hello-world (${round(helloMs, 1)} ms in turns with it), ${round(ms - helloMs, 1)} ms above it`,
    },
    ...(first ? [{ scenario, metric: 'import + first request', value: round(first.ms, 1), unit: 'ms', note: first.note }] : []),
  ];
}

/** A three-line middy handler, bundled the way infra/aws/functions.ts bundles a family. */
async function helloWorld(outdir: string): Promise<string> {
  const file = path.join(outdir, 'hello-world', 'index.mjs');
  mkdirSync(path.dirname(file), { recursive: true });
  await build({
    stdin: {
      contents: "import middy from '@middy/core';\nexport const handler = middy(async () => ({ statusCode: 200, body: 'hello' }));\n",
      resolveDir: PROJECT_ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: true,
    banner: { js: REQUIRE_SHIM },
    outfile: file,
    logLevel: 'error',
  });
  return file;
}

export async function run(): Promise<BenchRow[]> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'cold-start-'));
  try {
    const started = Date.now();
    execFileSync('npx', ['cdk', 'synth', '--quiet', '-o', outdir], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    const synthSeconds = round((Date.now() - started) / 1000, 1);
    const bundles = familyBundles(outdir, STACK, families);
    const hello = await helloWorld(outdir);
    const note = `cdk synth output; median of ${RUNS} fresh node ${process.version} processes`;

    const rows: BenchRow[] = [];
    const dynamo = await emptyDynamo();
    const helloSamples: number[] = [];
    rows.push({ scenario: 'cold start: hello-world middy bundle', metric: 'bundle', value: round(statSync(hello).size / 1024, 1), unit: 'kB' });
    for (const family of families) {
      const bundle = bundles.get(family);
      if (!bundle) throw new Error(`no bundle of family '${family}' in the cdk synth output`);
      const beside = await importTimeBeside(bundle.file, bundle.environment, hello, helloSamples);
      const request = FIRST_REQUEST[family];
      const first = request ? await firstRequestTime(bundle.file, bundle.environment, firstEvent(request), dynamo.endpoint) : undefined;
      rows.push(
        ...bundleRows(
          family,
          bundle,
          beside,
          first && request && { ms: first.ms, note: `${request.method} ${request.path} → ${first.status}: what loads on first use, one DynamoDB call to a local stand-in answering at once` },
          { kb: SIZE_TARGET_KB[family], ms: IMPORT_TARGET_MS[family] },
        ),
      );
    }
    // The webhooks family's event-source consumers (not in the route table): import, and an empty first batch.
    const consumers = functionBundles(outdir, STACK, CONSUMER_FUNCTIONS);
    for (const name of Object.keys(CONSUMER_FUNCTIONS)) {
      const bundle = consumers.get(name);
      if (!bundle) throw new Error(`no bundle of the ${name} function in the cdk synth output`);
      const beside = await importTimeBeside(bundle.file, bundle.environment, hello, helloSamples);
      const first = await firstRequestTime(bundle.file, bundle.environment, EMPTY_BATCH, dynamo.endpoint);
      rows.push(...bundleRows(name, bundle, beside, { ms: first.ms, note: `an empty batch → ${first.status}: its code, the AWS SDK and its clients loaded, no call made` }));
    }
    await dynamo.close();
    // Second row, after the bundle's: every hello-world import of the run.
    rows.splice(1, 0, { scenario: 'cold start: hello-world middy bundle', metric: 'import', value: round(median(helloSamples), 1), unit: 'ms', note: `${note}, taking turns with each family's` });
    const entities = bundles.get('entities');
    if (entities) {
      rows.push({
        scenario: 'cold start: entities with NODE_OPTIONS=--enable-source-maps',
        metric: 'import',
        value: round(await importTime(entities.file, entities.environment, '--enable-source-maps'), 1),
        unit: 'ms',
        note: 'for comparison: the source map parsed at load instead of on the first printed stack',
      });
    }
    rows.push({ scenario: 'cold start: cdk synth', metric: 'duration', value: synthSeconds, unit: 's' });
    return rows;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

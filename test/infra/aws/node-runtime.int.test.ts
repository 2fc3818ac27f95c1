/**
 * The bundles on the Node.js version Lambda runs them on (LAMBDA_RUNTIME, esbuild target
 * ESBUILD_TARGET): every function is bundled as for `cdk deploy`, then loaded and invoked by that
 * Node.js release (not the Node 20 of the development machines) — each API family with a request
 * of its own routes, the webhook consumers with an empty batch, the bootstrap handler with a
 * Delete. The Node.js binary comes from the npm registry's node-<platform>-<arch> package (what
 * the `node` package installs), unpacked once into node_modules/.cache; without the registry the
 * test is skipped, saying so.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BASE_ENVIRONMENT, ESBUILD_TARGET, EsbuildBundling, handlerEntry, LAMBDA_RUNTIME, PROJECT_ROOT, registryEnvironment, RUNTIME_SDK_FAMILIES, RUNTIME_SDK_MODULES } from '../../../infra/aws/functions.js';
import { bundleFilesFor } from '../../../infra/aws/docs.js';
import { families, routes, STREAMING_FAMILIES } from '../../../shared/routes.js';
import { proxyEvent } from '../../support/events.js';

/** The Node.js release of the runtime: nodejs24.x runs Node 24 (a recent release of that line). */
const NODE_VERSION = '24.21.0';
const MAJOR = Number(/^nodejs(\d+)\.x$/.exec(LAMBDA_RUNTIME.name)?.[1]);
const CACHE = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'lambda-node');
// Inside the project, so the health bundle finds the AWS SDK it leaves to the runtime.
const BUNDLES = path.join(PROJECT_ROOT, 'node_modules', '.cache', `lambda-bundles-${process.pid}`);

/** The node binary of NODE_VERSION, unpacked from the registry's package once; undefined (with the reason) when unobtainable. */
function nodeBinary(): { bin?: string; reason?: string } {
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = path.join(CACHE, `${pkg}-${NODE_VERSION}`);
  const bin = path.join(dir, 'package', 'bin', 'node');
  if (existsSync(bin)) return { bin };
  try {
    mkdirSync(dir, { recursive: true });
    const tarball = execFileSync('npm', ['pack', `${pkg}@${NODE_VERSION}`, '--silent', '--pack-destination', dir], { encoding: 'utf8', timeout: 180_000 }).trim().split('\n').pop()!;
    execFileSync('tar', ['xzf', path.join(dir, tarball), '-C', dir]);
    rmSync(path.join(dir, tarball), { force: true });
    return existsSync(bin) ? { bin } : { reason: `${pkg}@${NODE_VERSION} has no bin/node` };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `could not fetch ${pkg}@${NODE_VERSION} from the npm registry: ${(error as Error).message.split('\n')[0]}` };
  }
}

/** Loads each bundle and invokes its handler with its event, on the given node; prints the results as JSON. */
const RUNNER = `
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
// What the Lambda runtime provides to a streaming handler.
globalThis.awslambda = { streamifyResponse: (fn) => fn, HttpResponseStream: { from: (stream) => stream } };
const specs = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const results = {};
for (const spec of specs) {
  try {
    const mod = await import(pathToFileURL(spec.file).href);
    if (typeof mod.handler !== 'function') throw new Error('no handler export');
    const context = { awsRequestId: 'smoke', functionName: spec.name, getRemainingTimeInMillis: () => 15000 };
    results[spec.name] = { ok: true, result: spec.event === undefined ? null : await mod.handler(spec.event, context) };
  } catch (error) {
    results[spec.name] = { ok: false, error: String(error && error.stack || error) };
  }
}
console.log(JSON.stringify({ version: process.version, results }));
`;

interface Spec {
  name: string;
  entry: string;
  external?: string[];
  bundleFiles?: string[];
  event?: unknown;
  /** What the result must satisfy. */
  check: (result: any) => void;
}

function apiSpec(family: string): Spec {
  const streaming = (STREAMING_FAMILIES as readonly string[]).includes(family);
  const route = routes.find((r) => r.family === family && r.method === 'GET') ?? routes.find((r) => r.family === family)!;
  const concrete = route.path.replace(/\{entity\}/g, 'tasks').replace(/\{[^}]+\}/g, 'x1');
  return {
    name: family,
    entry: handlerEntry(family),
    external: RUNTIME_SDK_FAMILIES.has(family) ? RUNTIME_SDK_MODULES : [],
    bundleFiles: bundleFilesFor(family),
    // A streaming handler answers into a response stream: loading it is the check.
    event: streaming ? undefined : proxyEvent({ method: route.method, path: concrete }),
    check: (result) => {
      if (streaming) return;
      expect(result.statusCode, `${family}: ${route.method} ${concrete}`).toBeLessThan(500);
      expect(typeof result.body).toBe('string');
    },
  };
}

const consumerSpecs: Spec[] = [
  { name: 'webhook fan-out', entry: path.join(PROJECT_ROOT, 'functions/webhooks/fanout.ts'), event: { Records: [] }, check: (r) => expect(r).toEqual({ batchItemFailures: [] }) },
  { name: 'webhook delivery', entry: path.join(PROJECT_ROOT, 'functions/webhooks/deliver.ts'), event: { Records: [] }, check: (r) => expect(r).toEqual({ batchItemFailures: [] }) },
  {
    name: 'bootstrap',
    entry: handlerEntry('bootstrap'),
    event: { RequestType: 'Delete', PhysicalResourceId: 'bootstrap-admin', ResourceProperties: {} },
    check: (r) => expect(r).toEqual({ PhysicalResourceId: 'bootstrap-admin' }),
  },
];

const specs: Spec[] = [...families.map(apiSpec), ...consumerSpecs];
const node = nodeBinary();
let run: { version: string; results: Record<string, { ok: boolean; result?: unknown; error?: string }> } | undefined;

beforeAll(() => {
  if (!node.bin) return;
  mkdirSync(BUNDLES, { recursive: true });
  const files = specs.map((spec) => {
    const dir = path.join(BUNDLES, spec.name.replace(/\W+/g, '-'));
    new EsbuildBundling(spec.entry, spec.external ?? [], spec.bundleFiles ?? []).tryBundle(dir);
    return { name: spec.name, file: path.join(dir, 'index.mjs'), event: spec.event };
  });
  writeFileSync(path.join(BUNDLES, 'runner.mjs'), RUNNER);
  writeFileSync(path.join(BUNDLES, 'specs.json'), JSON.stringify(files));
  const env = {
    PATH: process.env.PATH,
    ...BASE_ENVIRONMENT,
    ...registryEnvironment(),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
    WEBHOOK_QUEUE_URL: 'http://127.0.0.1:9/queue',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    LOG_LEVEL: 'SILENT',
  };
  const child = spawnSync(node.bin, [path.join(BUNDLES, 'runner.mjs'), path.join(BUNDLES, 'specs.json')], { env, encoding: 'utf8', timeout: 120_000 });
  const line = child.stdout.split('\n').find((l) => l.startsWith('{"version"'));
  if (!line) throw new Error(`the runner printed no results (exit ${child.status}):\n${child.stdout}\n${child.stderr}`);
  run = JSON.parse(line);
}, 300_000);

afterAll(() => rmSync(BUNDLES, { recursive: true, force: true }));

describe(`bundles on Node ${NODE_VERSION} (the ${LAMBDA_RUNTIME.name} runtime)`, () => {
  it('builds for the runtime it deploys to', () => {
    expect(LAMBDA_RUNTIME.name).toBe('nodejs24.x');
    expect(ESBUILD_TARGET).toBe(`node${MAJOR}`);
    expect(NODE_VERSION.split('.')[0]).toBe(String(MAJOR));
  });

  it.skipIf(!node.bin).each(specs.map((s) => [s.name, s] as const))('%s loads and answers on that Node version', (name, spec) => {
    expect(run!.version).toBe(`v${NODE_VERSION}`);
    const outcome = run!.results[name];
    expect(outcome.error ?? '', name).toBe('');
    expect(outcome.ok).toBe(true);
    spec.check(outcome.result);
  });

  it.runIf(!node.bin)(`is skipped: ${node.reason ?? ''}`, () => {
    expect(node.reason).toBeDefined();
  });
});

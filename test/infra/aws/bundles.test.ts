/**
 * The bundles themselves: the whole app synthesized once with real esbuild bundling (as `cdk
 * synth` does), then each family's bundle read through esbuild's metafile. Generic over the
 * route table and functions/<dir>/handler.ts, so a family added later is checked too.
 */
import { App } from 'aws-cdk-lib';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchableFamilies } from '../../../functions/batch/families.js';
import { CONSUMER_FUNCTIONS, familyBundles, functionBundles, functionDirsOf, handlerDirs, loadedOutputs, type FamilyBundle, type Metafile } from '../../../infra/aws/bundles.js';
import { bundleFilesFor } from '../../../infra/aws/docs.js';
import { PROJECT_ROOT, REQUIRE_SHIM, RUNTIME_SDK_FAMILIES } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';
import { families } from '../../../shared/routes.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

let outdir: string;
let bundles: Map<string, FamilyBundle>;
let consumers: Map<string, FamilyBundle>;

beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'bundles-test-'));
  const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:enable-asset-metadata': true, 'aws:cdk:enable-path-metadata': true } });
  new EntityRecordApiStack(app, 'BundleTest');
  app.synth();
  bundles = familyBundles(outdir, 'BundleTest', families);
  consumers = functionBundles(outdir, 'BundleTest', CONSUMER_FUNCTIONS);
}, 300_000);

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

function metafileOf(bundle: FamilyBundle): Metafile {
  return JSON.parse(readFileSync(path.join(bundle.dir, 'index.meta.json'), 'utf8')) as Metafile;
}

/** Node built-ins imported by the files that load with the bundle (index.mjs and its static chunks). */
function builtinsAtLoad(bundle: FamilyBundle): string[] {
  const meta = metafileOf(bundle);
  const builtins = new Set<string>();
  for (const file of loadedOutputs(meta)) {
    for (const edge of meta.outputs[file].imports) if (edge.kind === 'import-statement' && edge.external) builtins.add(edge.path);
  }
  return [...builtins].sort();
}

/**
 * Inputs a request can evaluate: reached from the handler through static imports and every
 * import() of the bundle, except `skip`ped import() targets.
 */
function reachable(bundle: FamilyBundle, skip: RegExp): string[] {
  const meta = metafileOf(bundle);
  const entry = meta.outputs['index.mjs']?.entryPoint;
  const seen = new Set<string>();
  const pending = entry ? [entry] : [];
  while (pending.length) {
    const input = pending.pop()!;
    if (seen.has(input) || !meta.inputs[input]) continue;
    seen.add(input);
    for (const edge of meta.inputs[input].imports) {
      if (!edge.external && !(edge.kind === 'dynamic-import' && skip.test(edge.path))) pending.push(edge.path);
    }
  }
  return [...seen].map((input) => (input.includes('node_modules/') ? input.slice(input.lastIndexOf('node_modules/')) : input.replace(/^(\.\.\/)+/, '')));
}

/** The families measured against a cold-start target. */
const LEAN = ['health', 'auth', 'keys', 'entities', 'import', 'graphql'];

/** Families whose operations load on first use, though no cold-start target is set for them. */
const DEFERRED = ['upload', 'stream', 'webhooks'];

/**
 * Project files holding these families' operations and the consumers' code, and the body limits
 * (the upload limits import them; their 413 message formats numbers with Intl, about 20 ms at load).
 */
const OPERATIONS = /^shared\/((uploads|stream|webhooks)\/|body-limits\.ts$)/;

/** The functions/<dir>/ a family's bundle may hold: its own, and for batch the families it dispatches to. */
function allowedDirs(family: string): Set<string> {
  return new Set(family === 'batch' ? [family, ...batchableFamilies()] : [family]);
}

describe('family bundles', () => {
  it('exist for every family of the route table, each built from its own handler', () => {
    expect([...bundles.keys()].sort()).toEqual([...families].sort());
    for (const [family, bundle] of bundles) expect(bundle.inputs, family).toContain(`functions/${family}/handler.ts`);
  });

  it("never hold another family's handler or code (batch: only the families it dispatches to)", () => {
    const handlers = handlerDirs(PROJECT_ROOT);
    for (const [family, bundle] of bundles) {
      const others = [...functionDirsOf(bundle.inputs)].filter((dir) => !allowedDirs(family).has(dir));
      expect(others, `${family}'s bundle holds functions/${others.join(', functions/')}/`).toEqual([]);
      for (const dir of handlers) {
        if (!allowedDirs(family).has(dir)) expect(bundle.inputs, `${family} holds functions/${dir}/handler.ts`).not.toContain(`functions/${dir}/handler.ts`);
      }
    }
  });

  it('bundle the batch dispatcher only into the batch function', () => {
    for (const [family, bundle] of bundles) {
      const dispatcher = bundle.inputs.filter((input) => input.startsWith('functions/batch/'));
      if (family !== 'batch') expect(dispatcher, family).toEqual([]);
    }
  });

  it('leave the AWS SDK out of the health bundle (the Lambda runtime has it) and keep it small', () => {
    for (const family of RUNTIME_SDK_FAMILIES) {
      const bundle = bundles.get(family)!;
      expect(bundle.inputs.filter((i) => /node_modules\/@(aws-sdk|smithy)\//.test(i)), family).toEqual([]);
      expect(bundle.bytes, `${family} bundle bytes`).toBeLessThanOrEqual(120 * 1024);
    }
    expect(bundles.get('health')!.inputs.some((i) => i.startsWith('node_modules/graphql/') || i.startsWith('node_modules/ajv/'))).toBe(false);
  });

  it('are minified ESM (index.mjs and its chunks/), each file with the require shim and a source map without sources, and the stack-trace mapper', () => {
    for (const [family, bundle] of bundles) {
      // Files a family declares beside its code (the docs page's assets) are copied in after esbuild.
      const copied = new Set(bundleFilesFor(family).map((f) => f.split('/')[0]));
      const files = readdirSync(bundle.dir).filter((f) => !copied.has(f)).sort();
      expect(files.filter((f) => f !== 'chunks'), family).toEqual(['index.meta.json', 'index.mjs', 'index.mjs.map']);
      const chunks = files.includes('chunks') ? readdirSync(path.join(bundle.dir, 'chunks')).map((f) => path.join('chunks', f)) : [];
      for (const file of ['index.mjs', ...chunks.filter((f) => f.endsWith('.mjs'))]) {
        expect(readFileSync(path.join(bundle.dir, file), 'utf8').startsWith(REQUIRE_SHIM), `${family} ${file}`).toBe(true);
        expect(chunks.includes(`${file}.map`) || file === 'index.mjs', `${family} ${file}.map`).toBe(true);
        const map = JSON.parse(readFileSync(path.join(bundle.dir, `${file}.map`), 'utf8')) as { sourcesContent?: unknown };
        expect(map.sourcesContent, `${family} ${file}.map`).toBeUndefined();
      }
      expect(readFileSync(bundle.file, 'utf8'), family).toMatch(/export\s*\{[^}]*\bhandler\b/);
      expect(bundle.inputs, family).toContain('infra/aws/runtime/stack-traces.ts');
    }
  });

  it('load the AWS SDK, ajv and graphql on first use, not when the bundle loads (precompiled validators use only the run-time helpers of ajv)', () => {
    for (const [family, bundle] of bundles) {
      const atLoad = bundle.loadInputs.filter((i) => /^node_modules\/(@aws-sdk|@smithy|graphql)\/|^node_modules\/ajv\/(?!dist\/runtime\/)/.test(i));
      if (['health', 'auth', 'keys', 'entities', 'import', 'graphql'].includes(family)) expect(atLoad, family).toEqual([]);
    }
    const entities = bundles.get('entities')!;
    expect(entities.inputs.some((i) => i.startsWith('node_modules/@aws-sdk/'))).toBe(true);
    expect(entities.loadBytes).toBeLessThan(entities.bytes / 2);
  });

  it('load the upload, stream and webhooks operations (fan-out and delivery too) and the AWS SDK on first use, not when the bundle loads', () => {
    expect([...consumers.keys()].sort()).toEqual(Object.keys(CONSUMER_FUNCTIONS).sort());
    for (const [name, bundle] of [...DEFERRED.map((family) => [family, bundles.get(family)!] as const), ...consumers]) {
      const atLoad = bundle.loadInputs.filter((i) => /^node_modules\/(@aws-sdk|@smithy|@fastify\/busboy|file-type|@aws-lambda-powertools)\//.test(i) || OPERATIONS.test(i));
      expect(atLoad, name).toEqual([]);
      expect(bundle.inputs.some((i) => i.startsWith('node_modules/@aws-sdk/')), name).toBe(true);
      expect(builtinsAtLoad(bundle), name).not.toContain('node:crypto');
    }
  });

  it('load neither the logger, nor node:crypto, nor the plugin declarations when the bundle loads (health, auth, keys, entities, import, graphql)', () => {
    for (const family of LEAN) {
      const bundle = bundles.get(family)!;
      const atLoad = bundle.loadInputs.filter((i) => /^node_modules\/@aws-lambda-powertools\/|^shared\/plugins\/|^shared\/routes\.ts$/.test(i));
      expect(atLoad, family).toEqual([]);
      expect(builtinsAtLoad(bundle), family).not.toContain('node:crypto');
    }
    // What health loads is the middleware stack, its core routes and the health check.
    const health = bundles.get('health')!;
    expect(health.loadInputs.filter((i) => i.startsWith('node_modules/')).every((i) => i.startsWith('node_modules/@middy/core/')), health.loadInputs.join(', ')).toBe(true);
  });

  it('never evaluate ajv itself but in the plugins function (and the batch, which runs it): bodies are validated by precompiled validators', () => {
    // The registry compiles a definition that has no precompiled validator (test/shared/registry/precompiled.test.ts: no built-in one).
    const compiler = /^node_modules\/(ajv\/dist\/(?!runtime\/)|ajv-formats\/dist\/index\.js)/;
    for (const [family, bundle] of bundles) {
      const ajv = reachable(bundle, /shared\/registry\/schema-compiler\.ts$/).filter((i) => compiler.test(i));
      if (family === 'plugins' || family === 'batch') expect(ajv.length, family).toBeGreaterThan(0);
      else expect(ajv, family).toEqual([]);
    }
    expect(bundles.get('auth')!.inputs).toContain('shared/auth/validators.generated.ts');
  });

  it('never compile a schema at load: entity validators come precompiled', () => {
    const entities = bundles.get('entities')!;
    expect(entities.inputs).toContain('shared/registry/validators.generated.ts');
    expect(existsSync(entities.file)).toBe(true);
  });
});

describe('the plugins bundle', () => {
  it('evaluates neither ajv’s compiler nor the AWS SDK at cold start: precompiled route validators, the SDK on first use', () => {
    const bundle = bundles.get('plugins')!;
    const meta = metafileOf(bundle);
    // The cold start also runs the glob imports of the plugin declarations and handlers and of the entity definitions.
    const coldStartImports = /(^|\/)(plugins\/[^/]+\.(plugin|handlers)\.ts|shared\/registry\/entities\/[^/]+\.ts)$/;
    const entry = meta.outputs['index.mjs']!.entryPoint!;
    const pending = [entry, ...Object.keys(meta.inputs).filter((input) => coldStartImports.test(input))];
    const seen = new Set<string>();
    while (pending.length) {
      const input = pending.pop()!;
      if (seen.has(input) || !meta.inputs[input]) continue;
      seen.add(input);
      for (const edge of meta.inputs[input].imports) if (!edge.external && (edge.kind === 'import-statement' || edge.kind === 'require-call')) pending.push(edge.path);
    }
    const atColdStart = [...seen].map((input) => (input.includes('node_modules/') ? input.slice(input.lastIndexOf('node_modules/')) : input.replace(/^(\.\.\/)+/, '')));

    expect(atColdStart).toContain('shared/plugins/validators.generated.ts');
    expect(atColdStart).toContain('plugins/ai.handlers.ts');
    expect(atColdStart.filter((i) => /^node_modules\/(@aws-sdk|@smithy|ajv-formats)\/|^node_modules\/ajv\/(?!dist\/runtime\/)|^shared\/plugins\/schema-compiler\.ts$/.test(i))).toEqual([]);
    // ajv stays in the bundle, for a schema changed since `npm run schemas`.
    expect(bundle.inputs).toContain('shared/plugins/schema-compiler.ts');
  });
});

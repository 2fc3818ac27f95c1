/**
 * What a synthesized cloud assembly (`cdk synth` output) holds for each family function: its
 * asset directory (index.mjs, the chunks/ it imports, their source maps and esbuild's
 * index.meta.json), its environment and the project files each bundle was built from, all of
 * them and those evaluated when the bundle loads. Read by the bundle-content tests and the
 * cold-start bench, so both look at the very bundles a deploy uploads.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pascal } from './tables.js';
import type { Metafile } from 'esbuild';

export interface FamilyBundle {
  family: string;
  /** The asset directory. */
  dir: string;
  /** The bundle's entry file (index.mjs). */
  file: string;
  /** Bytes of its code: index.mjs and every chunk. */
  bytes: number;
  /** Bytes Node reads and parses when the bundle loads: index.mjs and the chunks it imports statically. */
  loadBytes: number;
  /** The function's environment as synthesized (references to other resources as placeholders). */
  environment: Record<string, string>;
  /** Project files and packages the bundle was built from, relative to the project root. */
  inputs: string[];
  /**
   * Those evaluated when the bundle loads: reached from the handler (and the injected files)
   * through static imports and requires. The others are evaluated by the `import()` that needs them.
   */
  loadInputs: string[];
}

export type { Metafile };

type Edge = { path: string; kind: string; external?: boolean };

/** The nodes reached from `roots` through the edges of `kinds` (`edgesOf` is undefined for a node the metafile does not have). */
function reach(roots: readonly string[], edgesOf: (node: string) => readonly Edge[] | undefined, kinds: readonly string[]): Set<string> {
  const reached = new Set<string>();
  const pending = [...roots];
  while (pending.length) {
    const node = pending.pop()!;
    const edges = reached.has(node) ? undefined : edgesOf(node);
    if (!edges) continue;
    reached.add(node);
    for (const edge of edges) if (!edge.external && kinds.includes(edge.kind)) pending.push(edge.path);
  }
  return reached;
}

/** Inputs reached from `roots` through static imports and requires. */
function staticallyReached(meta: Metafile, roots: readonly string[]): Set<string> {
  return reach(roots, (input) => meta.inputs[input]?.imports, ['import-statement', 'require-call']);
}

/** Output files (relative to the bundle) index.mjs loads: itself and the chunks it imports statically. */
export function loadedOutputs(meta: Metafile): Set<string> {
  return reach(['index.mjs'], (file) => meta.outputs[file]?.imports, ['import-statement']);
}

type TemplateResource = { Type: string; Properties?: Record<string, any>; Metadata?: Record<string, unknown> };

/** The functions/<dir>/ of each bundled input file ('' for files outside functions/). */
export function functionDirsOf(inputs: readonly string[]): Set<string> {
  const dirs = new Set<string>();
  for (const input of inputs) {
    const match = /^functions\/([^/]+)\//.exec(input);
    if (match) dirs.add(match[1]);
  }
  return dirs;
}

/**
 * The family bundles of stack `stackName` in the cloud assembly `outdir`, keyed by family. The
 * function of family f is the one whose construct path ends in Functions/<Pascal(f)>/Resource;
 * its asset path comes from the resource's aws:asset:path metadata (asset metadata is on in
 * `cdk synth`; in-process apps set the contexts aws:cdk:enable-asset-metadata and
 * aws:cdk:enable-path-metadata).
 */
export function familyBundles(outdir: string, stackName: string, families: readonly string[]): Map<string, FamilyBundle> {
  return functionBundles(outdir, stackName, Object.fromEntries(families.map((f) => [f, `Functions/${pascal(f)}`])));
}

/** The functions that are no family's API handler: the webhooks family's event-source consumers. */
export const CONSUMER_FUNCTIONS: Record<string, string> = { 'webhooks fan-out': 'Webhooks/Fanout', 'webhooks delivery': 'Webhooks/Deliver' };

/**
 * The bundles of the functions whose construct path ends in <constructPath>/Resource, keyed by
 * the names of `constructPaths` (name → construct path below the stack).
 */
export function functionBundles(outdir: string, stackName: string, constructPaths: Record<string, string>): Map<string, FamilyBundle> {
  const template = JSON.parse(readFileSync(path.join(outdir, `${stackName}.template.json`), 'utf8')) as { Resources: Record<string, TemplateResource> };
  const bundles = new Map<string, FamilyBundle>();
  for (const resource of Object.values(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const cdkPath = String(resource.Metadata?.['aws:cdk:path'] ?? '');
    const family = Object.keys(constructPaths).find((name) => cdkPath.endsWith(`/${constructPaths[name]}/Resource`));
    const assetPath = resource.Metadata?.['aws:asset:path'];
    if (!family || typeof assetPath !== 'string') continue;
    const dir = path.resolve(outdir, assetPath);
    const file = path.join(dir, 'index.mjs');
    const metafile = path.join(dir, 'index.meta.json');
    const environment = Object.fromEntries(
      Object.entries((resource.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : `synthesized-${k.toLowerCase()}`]),
    );
    const meta: Metafile = existsSync(metafile) ? (JSON.parse(readFileSync(metafile, 'utf8')) as Metafile) : { inputs: {}, outputs: {} };
    const code = Object.keys(meta.outputs).filter((f) => f.endsWith('.mjs'));
    const size = (files: Iterable<string>) => [...files].reduce((sum, f) => sum + (existsSync(path.join(dir, f)) ? statSync(path.join(dir, f)).size : 0), 0);
    const index = meta.outputs['index.mjs'];
    const injected = Object.keys(meta.inputs).filter((input) => input.endsWith('infra/aws/runtime/stack-traces.ts'));
    bundles.set(family, {
      family,
      dir,
      file,
      bytes: size(code),
      loadBytes: size(loadedOutputs(meta)),
      environment,
      inputs: Object.keys(meta.inputs).map(normalizeInput),
      loadInputs: [...staticallyReached(meta, index?.entryPoint ? [index.entryPoint, ...injected] : [])].map(normalizeInput),
    });
  }
  return bundles;
}

/** esbuild names inputs relative to its working directory: make them relative to the project root. */
function normalizeInput(input: string): string {
  const nodeModules = input.lastIndexOf('node_modules/');
  if (nodeModules >= 0) return input.slice(nodeModules);
  return input.replace(/^(\.\.\/)+/, '');
}

/** The directories of functions/ that hold a handler.ts (families, and other functions such as bootstrap). */
export function handlerDirs(projectRoot: string): string[] {
  const root = path.join(projectRoot, 'functions');
  return readdirSync(root).filter((d) => existsSync(path.join(root, d, 'handler.ts'))).sort();
}

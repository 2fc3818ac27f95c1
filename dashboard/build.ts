/**
 * Builds the dashboard (dashboard/src) into dashboard/dist: one script, one style sheet and the
 * icon, each named by a hash of its content (served as immutable), and index.html naming them
 * (served to be revalidated). esbuild bundles Preact, its signals, openapi-fetch (the typed client of
 * packages/client) and Pico CSS: nothing is fetched at run time, nothing is inlined (the page's
 * Content-Security-Policy forbids inline script and style).
 *
 * `npm run build:dashboard` builds; `npm start`, the test server and `cdk synth` call
 * `ensureDashboardBuilt()`, which builds only when a source is newer than the last build.
 * Synchronous (buildSync), so that CDK's synchronous bundling can call it.
 */
import { buildSync } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PROJECT_ROOT = path.resolve(HERE, '..');
export const DIST_DIR = path.join(HERE, 'dist');
export const MANIFEST = 'manifest.json';

export interface DashboardManifest {
  /** File name → media type; every file but index.html has a content hash in its name. */
  files: Record<string, string>;
  /** The script and style sheet index.html loads. */
  entry: { script: string; style: string };
  /** gzip-compressed size of the script the first page loads, in bytes (the bench reports it). */
  scriptGzipBytes: number;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The inputs of a build: when any is newer than the manifest, the build is stale. */
function inputs(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
  return [
    ...walk(path.join(HERE, 'src')),
    path.join(HERE, 'build.ts'),
    path.join(PROJECT_ROOT, 'package-lock.json'),
    path.join(PROJECT_ROOT, 'packages/client/src/index.ts'),
  ].filter((f) => existsSync(f));
}

export function isStale(): boolean {
  const manifest = path.join(DIST_DIR, MANIFEST);
  if (!existsSync(manifest)) return true;
  const built = statSync(manifest).mtimeMs;
  return inputs().some((f) => statSync(f).mtimeMs > built);
}

function page(script: string, style: string, icon: string): string {
  // Relative URLs: the page works at /dashboard, /prod/dashboard and under a custom domain's base path.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Entity Record API dashboard</title>
<link rel="icon" type="image/svg+xml" href="dashboard/${icon}">
<link rel="stylesheet" href="dashboard/${style}">
<script type="module" src="dashboard/${script}"></script>
</head>
<body>
<div id="app"><main class="container"><p aria-busy="true">Loading the dashboard…</p></main></div>
<noscript>The dashboard needs JavaScript.</noscript>
</body>
</html>
`;
}

/** Builds into a fresh directory, then swaps it in, so a server reading dist never sees half a build. */
export function buildDashboard(): DashboardManifest {
  const staging = `${DIST_DIR}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const result = buildSync({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: { main: path.join(HERE, 'src/main.tsx') },
    outdir: staging,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome115', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(HERE, 'tsconfig.json'),
    minify: true,
    legalComments: 'eof',
    metafile: true,
    loader: { '.svg': 'file' },
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const script = outputs.find((f) => /^main-.*\.js$/.test(f));
  const style = outputs.find((f) => /^main-.*\.css$/.test(f));
  if (!script || !style) throw new Error(`dashboard build: no script or style sheet in ${outputs.join(', ')}`);
  // The page names its icon, so browsers do not ask the origin for /favicon.ico (a 404 on every load).
  const svg = readFileSync(path.join(HERE, 'src/favicon.svg'));
  const icon = `favicon-${createHash('sha256').update(svg).digest('base64url').slice(0, 8)}.svg`;
  writeFileSync(path.join(staging, icon), svg);
  writeFileSync(path.join(staging, 'index.html'), page(script, style, icon));
  const files: Record<string, string> = {};
  for (const name of readdirSync(staging)) files[name] = TYPES[path.extname(name)] ?? 'text/plain; charset=utf-8';
  const { gzipSync } = process.getBuiltinModule('node:zlib');
  const manifest: DashboardManifest = {
    files,
    entry: { script, style },
    scriptGzipBytes: gzipSync(readFileSync(path.join(staging, script))).length,
  };
  writeFileSync(path.join(staging, MANIFEST), JSON.stringify(manifest, null, 2));
  const old = `${DIST_DIR}.${process.pid}.old`;
  if (existsSync(DIST_DIR)) renameSync(DIST_DIR, old);
  renameSync(staging, DIST_DIR);
  rmSync(old, { recursive: true, force: true });
  return manifest;
}

export function readManifest(): DashboardManifest {
  return JSON.parse(readFileSync(path.join(DIST_DIR, MANIFEST), 'utf8')) as DashboardManifest;
}

/** Builds when stale; a concurrent builder's finished build counts as this one's. */
export function ensureDashboardBuilt(): DashboardManifest {
  if (isStale()) {
    try {
      return buildDashboard();
    } catch (error) {
      // Another process swapped its build in between our checks: use it if it is complete.
      if (!isStale()) return readManifest();
      throw error;
    }
  }
  return readManifest();
}

/** Every file of the build, relative to the project root (what the dashboard family's bundle carries). */
export function dashboardFiles(): string[] {
  const manifest = ensureDashboardBuilt();
  return [...Object.keys(manifest.files), MANIFEST].sort().map((f) => path.relative(PROJECT_ROOT, path.join(DIST_DIR, f)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const manifest = buildDashboard();
  console.log(`dashboard built: ${Object.keys(manifest.files).join(', ')} (script ${(manifest.scriptGzipBytes / 1024).toFixed(1)} kB gzipped)`);
}

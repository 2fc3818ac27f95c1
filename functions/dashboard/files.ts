/**
 * The built dashboard (dashboard/dist, made by dashboard/build.ts) as HTTP answers: index.html
 * revalidated on every visit (its ETag makes that a 304), the hashed script and style sheet
 * cached for a year, every answer with the page's Content-Security-Policy. Locally the files are
 * read from the project; on AWS from the family's bundle, which carries them at the same
 * relative path (infra/aws/docs.ts).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError } from '../../shared/errors.js';

/** No inline script or style, nothing from another origin; data: images for Pico's icons. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export const INDEX_CACHE = 'no-cache';
export const ASSET_CACHE = 'public, max-age=31536000, immutable';

export interface DashboardFile {
  body: string;
  headers: Record<string, string>;
}

interface Manifest {
  files: Record<string, string>;
}

/** dashboard/dist in the nearest directory above this module that has one (the project, or the Lambda bundle). */
function distDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'dashboard', 'dist');
    if (existsSync(path.join(candidate, 'manifest.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('dashboard/dist not found: run npm run build:dashboard');
    dir = parent;
  }
}

let cache: { dir: string; built: number; manifest: Manifest; files: Map<string, DashboardFile> } | undefined;

/**
 * The manifest is read again when it changed on disk, so a local server picks up a rebuild.
 * In Lambda the bundle never changes; the check is one stat per request.
 */
function current(): NonNullable<typeof cache> {
  const dir = cache?.dir ?? distDir();
  const manifestPath = path.join(dir, 'manifest.json');
  const built = statSync(manifestPath).mtimeMs;
  if (!cache || cache.built !== built) {
    cache = { dir, built, manifest: JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest, files: new Map() };
  }
  return cache;
}

function load(name: string): DashboardFile {
  const state = current();
  const type = Object.hasOwn(state.manifest.files, name) ? state.manifest.files[name] : undefined;
  if (!type || name === 'manifest.json') throw new NotFoundError(`No dashboard file named '${name}'`);
  let file = state.files.get(name);
  if (!file) {
    file = {
      body: readFileSync(path.join(state.dir, name), 'utf8'),
      headers: {
        'Content-Type': type,
        'Cache-Control': name === 'index.html' ? INDEX_CACHE : ASSET_CACHE,
        'Content-Security-Policy': DASHBOARD_CSP,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'same-origin',
      },
    };
    state.files.set(name, file);
  }
  return file;
}

export function dashboardPage(): DashboardFile {
  return load('index.html');
}

/** A hashed asset by name; index.html only at /dashboard, anything else 404. */
export function dashboardAsset(name: string): DashboardFile {
  if (name === 'index.html') throw new NotFoundError(`No dashboard file named '${name}'`);
  return load(name);
}

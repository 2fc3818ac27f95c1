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
import { config } from '../../shared/config.js';
import { NotFoundError } from '../../shared/errors.js';

/** A bucket name S3 addresses as a host name (virtual-hosted style): every name CDK generates. */
const DNS_BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/**
 * Where the browser POSTs a presigned upload (POST /api/v1/upload/presign answers its URL): the
 * configured endpoint (s3rver under `npm start`, S3_ENDPOINT or AWS_ENDPOINT_URL_S3), else the
 * bucket's regional endpoint as the AWS SDK names it (test/functions/dashboard/csp.test.ts
 * compares the two).
 */
export function storageOrigin(uploads: { bucket: string; s3Endpoint?: string }, region: string): string {
  if (uploads.s3Endpoint) return new URL(uploads.s3Endpoint).origin;
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return DNS_BUCKET.test(uploads.bucket) ? `https://${uploads.bucket}.s3.${region}.${suffix}` : `https://s3.${region}.${suffix}`;
}

/**
 * No inline script or style, nothing loaded from another origin; data: images for Pico's icons.
 * The one other origin the page may reach is the object store, for uploads above what one
 * request to a function carries.
 */
export function dashboardCsp(storage: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src 'self' ${storage}`,
    "font-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

/** The policy for the deployment's configuration (read on each answer: the local endpoint is known only once s3rver runs). */
function currentCsp(): string {
  const { uploads, region } = config();
  return dashboardCsp(storageOrigin(uploads, region));
}

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
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'same-origin',
      },
    };
    state.files.set(name, file);
  }
  return { body: file.body, headers: { ...file.headers, 'Content-Security-Policy': currentCsp() } };
}

export function dashboardPage(): DashboardFile {
  return load('index.html');
}

/** A hashed asset by name; index.html only at /dashboard, anything else 404. */
export function dashboardAsset(name: string): DashboardFile {
  if (name === 'index.html') throw new NotFoundError(`No dashboard file named '${name}'`);
  return load(name);
}

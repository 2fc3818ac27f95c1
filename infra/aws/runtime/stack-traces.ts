/**
 * Injected into every Lambda bundle (infra/aws/functions.ts): stack traces that point at the
 * TypeScript sources, at no cost until a stack is printed.
 *
 * `NODE_OPTIONS=--enable-source-maps` parses the whole source map while the bundle loads (15 to
 * 20 ms of every cold start); `process.setSourceMapsEnabled(true)` called later only maps modules
 * loaded after the call, which the bundle never is. So a file's map is read here on the first
 * stack that shows one of its frames (V8 calls Error.prepareStackTrace only when `error.stack`
 * is read), with node:module's SourceMap, and each frame of the bundle (index.mjs and the chunks
 * it imports on first use, each with its own `.map`) is rewritten to its original file, line and
 * column. Frames of other files, and any failure to read a map, keep V8's own text.
 *
 * node:fs, node:module and node:url are taken with process.getBuiltinModule (Node 20.16, 22.3)
 * when a stack is first mapped: an import here would load them at every cold start.
 */
type CallSite = NodeJS.CallSite;
type SourceMapModule = typeof import('node:module');

/** The bundle's directory: this module is in index.mjs or in one of its chunks/. */
const bundleDir = new URL('.', import.meta.url).href.replace(/chunks\/$/, '');
const sourceMaps = new Map<string, InstanceType<SourceMapModule['SourceMap']> | null>();

function loadSourceMap(fileUrl: string): InstanceType<SourceMapModule['SourceMap']> | null {
  let map = sourceMaps.get(fileUrl);
  if (map === undefined) {
    try {
      const { readFileSync } = process.getBuiltinModule('node:fs');
      const { SourceMap } = process.getBuiltinModule('node:module');
      map = new SourceMap(JSON.parse(readFileSync(new URL(`${fileUrl}.map`), 'utf8')));
    } catch {
      map = null;
    }
    sourceMaps.set(fileUrl, map);
  }
  return map;
}

/** The file URL of a frame of this bundle, or undefined. */
function bundleFileOf(file: string): string | undefined {
  const url = file.startsWith('/') ? process.getBuiltinModule('node:url').pathToFileURL(file).href : file;
  return url.startsWith(bundleDir) && url.endsWith('.mjs') ? url : undefined;
}

function frame(site: CallSite): string {
  const file = bundleFileOf(site.getFileName() ?? '');
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (line === null || column === null || !file) return site.toString();
  const map = loadSourceMap(file);
  const entry = map?.findEntry(line - 1, column - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number; name?: string } | undefined;
  if (!entry?.originalSource) return site.toString();
  const name = entry.name ?? site.getFunctionName() ?? '<anonymous>';
  const source = entry.originalSource.replace(/^(\.\.\/)+/, '');
  return `${site.isAsync() ? 'async ' : ''}${name} (${source}:${(entry.originalLine ?? 0) + 1}:${(entry.originalColumn ?? 0) + 1})`;
}

/** The stack text of `error` with the bundle's frames mapped to the sources. */
export function mappedStack(error: unknown, sites: CallSite[]): string {
  let header: string;
  try {
    header = Error.prototype.toString.call(error);
  } catch {
    header = 'Error';
  }
  return [header, ...sites.map((site) => `    at ${frame(site)}`)].join('\n');
}

if (!process.execArgv.includes('--enable-source-maps') && !process.env.NODE_OPTIONS?.includes('--enable-source-maps')) {
  Error.prepareStackTrace = mappedStack;
}

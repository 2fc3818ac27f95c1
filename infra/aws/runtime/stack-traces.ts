/**
 * Injected into every Lambda bundle (infra/aws/functions.ts): stack traces that point at the
 * TypeScript sources, at no cost until a stack is printed.
 *
 * `NODE_OPTIONS=--enable-source-maps` parses the whole source map while the bundle loads (15 to
 * 20 ms of every cold start); `process.setSourceMapsEnabled(true)` called later only maps modules
 * loaded after the call, which the bundle never is. So the map is read here on the first stack
 * that is formatted (V8 calls Error.prepareStackTrace only when `error.stack` is read), with
 * node:module's SourceMap, and each frame of the bundle is rewritten to its original file, line
 * and column. Frames of other files, and any failure to read the map, keep V8's own text.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

type CallSite = NodeJS.CallSite;

const bundleFile = fileURLToPath(import.meta.url);
let sourceMap: SourceMap | null | undefined;

function loadSourceMap(): SourceMap | null {
  if (sourceMap === undefined) {
    try {
      sourceMap = new SourceMap(JSON.parse(readFileSync(`${bundleFile}.map`, 'utf8')));
    } catch {
      sourceMap = null;
    }
  }
  return sourceMap;
}

function frame(site: CallSite): string {
  const file = site.getFileName() ?? '';
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (line === null || column === null || !(file === bundleFile || file === import.meta.url)) return site.toString();
  const map = loadSourceMap();
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

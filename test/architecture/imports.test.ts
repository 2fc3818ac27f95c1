/**
 * The import rules of docs/project-layout.md, read from the source: every import of every .ts
 * file under shared/, functions/, infra/ and bin/ (static, type-only, re-exports and `import()`
 * of a literal path), found by the TypeScript compiler's own pre-processor.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['shared', 'functions', 'infra', 'bin'];

/** Files of shared/ (outside an area) that may import shared/http/: the route declarations. */
const ROUTE_DECLARATIONS = ['shared/routes.ts', 'shared/core-routes.ts'];
/** Areas of shared/ where HTTP meets the domain, or that are HTTP themselves. */
const HTTP_AREAS = ['http', 'openapi', 'graphql'];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(path.join(ROOT, dir))) {
    const file = path.posix.join(dir, entry);
    if (statSync(path.join(ROOT, file)).isDirectory()) sourceFiles(file, out);
    else if (file.endsWith('.ts') && !file.endsWith('.d.ts')) out.push(file);
  }
  return out;
}

/** A relative specifier as the file it names (`./x.js` → x.ts, a directory → its index.ts); undefined when it names no .ts file. */
function resolve(from: string, specifier: string): string | undefined {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((file) => file.endsWith('.ts') && existsSync(path.join(ROOT, file)) && statSync(path.join(ROOT, file)).isFile());
}

interface Import {
  from: string;
  to: string;
}

function importsOf(file: string): Import[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
  return importedFiles.flatMap(({ fileName }) => {
    const to = fileName.startsWith('.') ? resolve(file, fileName) : undefined;
    return to ? [{ from: file, to }] : [];
  });
}

const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(dir));
const imports = files.flatMap(importsOf);

/** The area of shared/ a file belongs to (its first folder), undefined outside one. */
function areaOf(file: string): string | undefined {
  return /^shared\/([^/]+)\//.exec(file)?.[1];
}

/** The import cycles: strongly connected components of more than one file, or a file importing itself. */
function cycles(): string[][] {
  const edges = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const { from, to } of imports) edges.get(from)?.push(to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || edges.get(node)!.includes(node)) found.push(component.sort());
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return found;
}

const show = (list: Import[]) => list.map(({ from, to }) => `${from} → ${to}`);

describe('imports', () => {
  it('are read from every source file (the parse finds the imports it should)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(imports).toContainEqual({ from: 'shared/http/stack.ts', to: 'shared/http/types.ts' });
  });

  it('form no cycle, type-only imports included', () => {
    expect(cycles()).toEqual([]);
  });

  it('of shared/http/ come only from shared/http/, shared/openapi/, shared/graphql/ and the route declarations', () => {
    const allowed = (from: string) => HTTP_AREAS.includes(areaOf(from) ?? '') || ROUTE_DECLARATIONS.includes(from) || !from.startsWith('shared/');
    expect(show(imports.filter(({ from, to }) => to.startsWith('shared/http/') && !allowed(from)))).toEqual([]);
  });

  it('never go from shared/ to a handler (functions/), the infrastructure (infra/) or a command (bin/)', () => {
    expect(show(imports.filter(({ from, to }) => from.startsWith('shared/') && /^(functions|infra|bin)\//.test(to)))).toEqual([]);
  });
});

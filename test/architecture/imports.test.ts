/**
 * The import rules of docs/project-layout.md, read from the source: every import of every .ts
 * file under shared/, functions/, infra/ and bin/ (static, type-only, re-exports, `import()` and
 * `import('…')` types of a literal path), found in the syntax tree the TypeScript compiler parses.
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
/**
 * Areas entered module by module, each with the reason it cannot have a front door. None: the
 * area-level loops are broken (scopes, the deployment secret, record ids and the route-table
 * types sit at the top of shared/; the live layout's value is data's, its loader the
 * migrations'), so every area has its index.ts.
 */
const WITHOUT_FRONT_DOOR: string[] = [];
/**
 * Second, narrower entries beside a front door, where the front door would bring more code into
 * another family's bundle than it uses:
 * - the entity rules without the service (auth, import, stream);
 * - the query-string parsing without the planner (the entity metadata options);
 * - the auth bodies' schemas (plain data): the route declarations take them, and every family's
 *   cold start loads those; auth's front door would bring API keys, node:crypto and the SDK;
 * - the per-request usage: the middleware stack counts it at every cold start; data's front door
 *   would bring the DynamoDB client and the SDK;
 * - data's layout value and key building alone (pure: layout.ts, partitions.ts, listings.ts): the
 *   query planner takes them, which the API description (docs) loads at cold start; data's front
 *   door would bring the client and the SDK there (the layout loader takes layout.ts's maker too);
 * - the plugin declarations without their route validators: the route table and the API
 *   description load them at cold start (docs, batch), and the key scopes check the resources they
 *   name (keys); the validators, and ajv behind them, are the plugins family's;
 * - the ajv compiler of the registry: the schema generators and the plugins' compiler (loaded on
 *   first use) take it; the registry's front door is loaded at cold start and must not bring ajv.
 */
const NARROW_ENTRIES = [
  'shared/entities/rules.ts',
  'shared/query/params.ts',
  'shared/auth/body-schemas.ts',
  'shared/data/usage.ts',
  'shared/data/layout.ts',
  'shared/data/partitions.ts',
  'shared/data/listings.ts',
  'shared/plugins/declarations.ts',
  'shared/registry/schema-compiler.ts',
];

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
  /** `import()` loads the module on first use; every other form is read when the importer loads (or is a type). */
  dynamic: boolean;
}

function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, false);
  const found: Import[] = [];
  const add = (specifier: ts.Node | undefined, dynamic: boolean) => {
    if (!specifier || !ts.isStringLiteralLike(specifier) || !specifier.text.startsWith('.')) return;
    const to = resolve(file, specifier.text);
    if (to) found.push({ from: file, to, dynamic });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier, false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, false);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(dir));
const imports = files.flatMap(importsOf);

/** A name an import or re-export declaration takes from its module (`*`: all of them). */
interface NamedImport {
  from: string;
  to: string;
  name: string;
}

function namedImportsOf(file: string): NamedImport[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, false);
  const found: NamedImport[] = [];
  for (const node of source.statements) {
    const specifier = ts.isImportDeclaration(node) || ts.isExportDeclaration(node) ? node.moduleSpecifier : undefined;
    if (!specifier || !ts.isStringLiteralLike(specifier) || !specifier.text.startsWith('.')) continue;
    const to = resolve(file, specifier.text);
    if (!to) continue;
    const names: string[] = [];
    if (ts.isImportDeclaration(node)) {
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) names.push(...bindings.elements.map((e) => (e.propertyName ?? e.name).text));
      else if (bindings) names.push('*');
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      if (clause && ts.isNamedExports(clause)) names.push(...clause.elements.map((e) => (e.propertyName ?? e.name).text));
      else names.push('*');
    }
    found.push(...names.map((name) => ({ from: file, to, name })));
  }
  return found;
}

const namedImports = files.flatMap(namedImportsOf);

/** The area of shared/ a file belongs to (its first folder), undefined outside one. */
function areaOf(file: string): string | undefined {
  return /^shared\/([^/]+)\//.exec(file)?.[1];
}

/** The cycles of a graph: strongly connected components of more than one node, or a node importing itself. */
function cyclesOf(edges: Map<string, string[]>): string[][] {
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

/** The import cycles between files. */
function cycles(): string[][] {
  const edges = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const { from, to } of imports) edges.get(from)?.push(to);
  return cyclesOf(edges);
}

/** The loops between areas of shared/: area A imports from area B, and B (through others) from A. */
function areaLoops(): string[][] {
  const edges = new Map<string, string[]>();
  for (const { from, to } of imports) {
    const [a, b] = [areaOf(from), areaOf(to)];
    if (!a || !b || a === b) continue;
    edges.set(a, [...(edges.get(a) ?? []), b]);
    if (!edges.has(b)) edges.set(b, []);
  }
  return cyclesOf(edges);
}

const show = (list: Import[]) => list.map(({ from, to, dynamic }) => `${from} → ${to}${dynamic ? ' (import())' : ''}`);

describe('imports', () => {
  it('are read from every source file (the parse finds the imports it should)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(imports).toContainEqual({ from: 'shared/http/stack.ts', to: 'shared/http/types.ts', dynamic: false });
    expect(imports).toContainEqual({ from: 'functions/entities/handler.ts', to: 'shared/http/operations/entities.ts', dynamic: true });
  });

  it('form no cycle, type-only imports included', () => {
    expect(cycles()).toEqual([]);
  });

  it('form no loop between areas of shared/ (a front door on both sides of one would make a file cycle)', () => {
    expect(areaLoops()).toEqual([]);
  });

  it('of shared/http/ come only from shared/http/, shared/openapi/, shared/graphql/ and the route declarations', () => {
    const allowed = (from: string) => HTTP_AREAS.includes(areaOf(from) ?? '') || ROUTE_DECLARATIONS.includes(from) || !from.startsWith('shared/');
    expect(show(imports.filter(({ from, to }) => to.startsWith('shared/http/') && !allowed(from)))).toEqual([]);
  });

  it('never go from shared/ to a handler (functions/), the infrastructure (infra/) or a command (bin/)', () => {
    expect(show(imports.filter(({ from, to }) => from.startsWith('shared/') && /^(functions|infra|bin)\//.test(to)))).toEqual([]);
  });

  it('between areas of shared/ go through the front door (index.ts) or a narrow entry, except import() of a module loaded on first use', () => {
    const deep = imports.filter(({ from, to, dynamic }) => {
      const area = areaOf(to);
      if (!from.startsWith('shared/') || dynamic || !area || area === areaOf(from) || WITHOUT_FRONT_DOOR.includes(area)) return false;
      return to !== `shared/${area}/index.ts` && !NARROW_ENTRIES.includes(to);
    });
    expect(show(deep)).toEqual([]);
  });

  it('have a front door in every area another area imports from, unless listed as without one', () => {
    const entered = new Set(imports.filter(({ from, to }) => from.startsWith('shared/') && areaOf(to) && areaOf(to) !== areaOf(from)).map(({ to }) => areaOf(to)!));
    const missing = [...entered].filter((area) => !WITHOUT_FRONT_DOOR.includes(area) && !existsSync(path.join(ROOT, 'shared', area, 'index.ts')));
    expect(missing).toEqual([]);
  });
});

it('no `as unknown as` in shared/ and functions/', () => {
  const found = files
    .filter((file) => /^(shared|functions)\//.test(file))
    .flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bas unknown as\b/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );

  expect(found).toEqual([]);
});

/** THE layout loader: the one module that reads, for requests, which layout they write and read with, and keeps it between calls. */
const LAYOUT_LOADER = 'shared/migrations/live-layouts.ts';
/** The layout value and its maker (shared/data/layout.ts buildLayout): the loader's alone; definitionLayout is the definition's. */
const LAYOUT_VALUE = 'shared/data/layout.ts';
/** The migration states (read and written): the migrations area's and its job's (functions/migration-job/, `npm start`'s infra/local/migrations.ts). */
const MIGRATION_STATES = 'shared/migrations/state.ts';
/** Where the loader's value goes as an argument: keys, items, transactions, readers, plans, definitions. */
const BELOW_LOADER = ['shared/data/', 'shared/query/', 'shared/registry/'];

describe('the live layout (docs/project-layout.md)', () => {
  it('is read by nothing below its loader: data, query and the registry import nothing of shared/migrations/ (a layout reaches them as an argument)', () => {
    expect(show(imports.filter(({ from, to }) => BELOW_LOADER.some((dir) => from.startsWith(dir)) && to.startsWith('shared/migrations/')))).toEqual([]);
  });

  it('is made by its loader alone: no other module imports the maker of layout values', () => {
    const makers = namedImports.filter(({ to, name }) => to === LAYOUT_VALUE && (name === 'buildLayout' || name === '*'));
    expect(makers.map(({ from }) => from)).toEqual([LAYOUT_LOADER]);
  });

  it('comes from migration states that only the loader, the rest of the migrations area and its job read: a service gets them from the loader', () => {
    const readers = imports.filter(({ from, to }) => to === MIGRATION_STATES && !from.startsWith('shared/migrations/'));
    expect(show(readers.filter(({ from }) => !from.startsWith('functions/migration-job/') && from !== 'infra/local/migrations.ts'))).toEqual([]);
    expect(imports.some(({ from, to }) => from === LAYOUT_LOADER && to === MIGRATION_STATES)).toBe(true);
  });
});

/** The record core: the folders a change to how records are stored, listed and migrated goes through. */
const CORE_DIRS = ['shared/data/', 'shared/entities/', 'shared/migrations/'];
const MAX_CORE_LINES = 450;

describe('the record core', () => {
  it(`keeps every file of ${CORE_DIRS.join(', ')} within ${MAX_CORE_LINES} lines, readable at once`, () => {
    const long = files
      .filter((file) => CORE_DIRS.some((dir) => file.startsWith(dir)))
      .map((file) => ({ file, lines: readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_CORE_LINES);
    expect(long).toEqual([]);
  });
});

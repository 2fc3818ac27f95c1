/**
 * The entity registry: every file of shared/registry/entities/ is one entity definition
 * (`export default {...}`). Adding an entity is adding one file there; nothing else changes.
 *
 * Loading (once per process, `loadRegistry()`; the entities handler awaits it at module load,
 * so a bad definition fails the cold start / `npm start` with a message naming the entity):
 * - from source (tsx, vitest: `npm start`, tests), the directory is read and each file imported;
 * - in a Lambda bundle there is no directory: esbuild bundles every file of entities/ through the
 *   glob import `import(`./entities/${name}.ts`)`, and the names come from the environment
 *   variable ENTITY_FILES (comma list of file names without .ts), which the CDK stack sets from
 *   `entityFileNames()` at synth time — so a new file is picked up by the next deploy.
 * Every definition is checked (validateDefinition), then the set (validateRegistry), then each
 * entity's validators are taken from the precompiled ones or compiled once (ajv).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compileSchemas, isPrecompiled, prepareSchemaCompiler } from './schemas.js';
import type { LoadedEntity } from './types.js';
import { RegistryError, validateDefinition, validateRegistry } from './validate.js';

export { RegistryError, validateDefinition, validateRegistry } from './validate.js';
export type { EntityDefinition, LoadedEntity } from './types.js';

export const ENTITY_FILES_ENV = 'ENTITY_FILES';
/**
 * A directory of more definition files, loaded after the built-in ones (from source only: tests
 * start a server with entities of their own this way, without touching shared/registry/entities/).
 */
export const ENTITIES_DIR_ENV = 'ENTITIES_DIR';

/** The directory of the built-in definitions, when running from source. */
export function entitiesDirectory(): string | undefined {
  try {
    const dir = fileURLToPath(new URL('./entities/', import.meta.url));
    return existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Definition files of a directory: `<name>.ts` (not .d.ts, not tests, not starting with _ or .). */
export function entityFileNames(dir: string | undefined = entitiesDirectory()): string[] {
  if (!dir) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.includes('.test.') && !/^[_.]/.test(f))
    .map((f) => f.slice(0, -3))
    .sort();
}

async function importBuiltIn(name: string): Promise<unknown> {
  // A glob import: esbuild bundles every file of ./entities/ and picks one by name at run time.
  return import(`./entities/${name}.ts`);
}

export interface LoadOptions {
  /** Another directory of definition files (tests). */
  dir?: string;
}

/** Imports, checks and compiles definitions; throws RegistryError with a clear message. */
export async function loadDefinitions(options: LoadOptions = {}): Promise<LoadedEntity[]> {
  let names: string[];
  let load: (name: string) => Promise<unknown>;
  const dir = options.dir;
  if (dir) {
    names = entityFileNames(dir);
    load = (name) => import(pathToFileURL(join(dir, `${name}.ts`)).href);
  } else {
    const dir = entitiesDirectory();
    const listed = process.env[ENTITY_FILES_ENV];
    names = listed ? listed.split(',').map((s) => s.trim()).filter(Boolean) : entityFileNames(dir);
    if (!listed && !dir) {
      throw new RegistryError(
        `Entity registry: ${ENTITY_FILES_ENV} is not set and shared/registry/entities/ is not readable (a bundle must be deployed with ${ENTITY_FILES_ENV}=entityFileNames())`,
        ['no definition files'],
      );
    }
    load = importBuiltIn;
  }
  const files = names.map((name) => ({ source: `shared/registry/entities/${name}.ts`, load: () => load(name) }));
  const extra = options.dir ? undefined : process.env[ENTITIES_DIR_ENV];
  if (extra) {
    for (const name of entityFileNames(extra)) {
      files.push({ source: join(extra, `${name}.ts`), load: () => import(pathToFileURL(join(extra, `${name}.ts`)).href) });
    }
  }
  const entities: LoadedEntity[] = [];
  for (const { source, load: loadFile } of files) {
    let module: { default?: unknown };
    try {
      module = (await loadFile()) as { default?: unknown };
    } catch (error) {
      throw new RegistryError(`Invalid entity definition: ${source}: cannot be loaded (${(error as Error).message})`, ['cannot be loaded']);
    }
    const entity = validateDefinition(module.default, source);
    entities.push(entity);
  }
  validateRegistry(entities);
  // ajv is loaded only for a definition whose validators were not precompiled (npm run schemas).
  if (!entities.every(isPrecompiled)) await prepareSchemaCompiler();
  for (const entity of entities) {
    try {
      compileSchemas(entity);
    } catch (error) {
      throw new RegistryError(`Invalid entity definition: ${entity.source} entity '${entity.slug}': schema does not compile (${(error as Error).message})`, [
        'schema does not compile',
      ]);
    }
  }
  return entities;
}

let registry: Map<string, LoadedEntity> | undefined;
let loading: Promise<Map<string, LoadedEntity>> | undefined;

/** Loads the registry once per process (later calls share the first load). */
export function loadRegistry(): Promise<Map<string, LoadedEntity>> {
  loading ??= loadDefinitions().then((entities) => {
    registry = new Map(entities.map((e) => [e.slug, e]));
    return registry;
  });
  return loading;
}

/** For tests: a registry made of these definitions (checked like loaded ones). */
export function useDefinitions(definitions: readonly unknown[]): Map<string, LoadedEntity> {
  const entities = definitions.map((d, i) => validateDefinition(d, `definition #${i}`));
  validateRegistry(entities);
  for (const e of entities) compileSchemas(e);
  registry = new Map(entities.map((e) => [e.slug, e]));
  loading = Promise.resolve(registry);
  return registry;
}

function loaded(): Map<string, LoadedEntity> {
  if (!registry) throw new Error('The entity registry is not loaded: await loadRegistry() first');
  return registry;
}

/** The entity served at /api/v1/<slug>, if registered. */
export function findEntity(slug: string): LoadedEntity | undefined {
  return loaded().get(slug);
}

export function allEntities(): LoadedEntity[] {
  return [...loaded().values()];
}

export function isRegistryLoaded(): boolean {
  return registry !== undefined;
}

/**
 * One Lambda function per operation family: functions/<family>/handler.ts, export `handler`,
 * bundled locally by esbuild (no Docker) into index.mjs and the chunks it imports on first use.
 * `createBundledFunction` builds any other function of the app the same way (the bootstrap
 * admin's, infra/aws/bootstrap.ts).
 */
import { AssetHashType, DockerImage, Duration, RemovalPolicy, type ILocalBundling } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { buildSync, type Metafile } from 'esbuild';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_FUNCTION_TIMEOUT_SECONDS } from '../../shared/http/deadline.js';
import { ENTITY_FILES_ENV, entityFileNames } from '../../shared/registry/index.js';
import { bundleFilesFor } from './docs.js';
import { STREAMING_FAMILIES, STREAMING_TIMEOUT_SECONDS } from '../../shared/routes.js';
import { grantTableAccess } from './permissions.js';
import { pascal, tableEnvName, type TableId, type Tables } from './tables.js';

/** The repository root: where package.json, package-lock.json and functions/ are. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const SERVICE_NAME = 'entity-record-api';

/** Lets an ESM bundle load CommonJS dependencies that call `require`. */
export const REQUIRE_SHIM = "import { createRequire } from 'module';const require = createRequire(import.meta.url);";

export function handlerEntry(family: string): string {
  return path.join(PROJECT_ROOT, 'functions', family, 'handler.ts');
}

/**
 * Injected into every bundle: stack traces mapped to the sources when one is printed, instead of
 * NODE_OPTIONS=--enable-source-maps, which parses the source map at every cold start.
 */
export const STACK_TRACES = path.join(PROJECT_ROOT, 'infra', 'aws', 'runtime', 'stack-traces.ts');

/**
 * The Lambda runtime of every function, and the Node.js version esbuild builds for: changed
 * together (the bundle smoke test runs the bundles on that Node version).
 */
export const LAMBDA_RUNTIME = lambda.Runtime.NODEJS_24_X;
export const ESBUILD_TARGET = 'node24';

/**
 * Families whose bundle leaves the AWS SDK out and uses the one of the Lambda runtime (nodejs24.x
 * carries AWS SDK v3): the health check makes one DescribeTable, imported on first use
 * (shared/data/health.ts), so its bundle stays a few dozen kB and its cold start loads nothing heavy.
 */
export const RUNTIME_SDK_FAMILIES: ReadonlySet<string> = new Set(['health']);
export const RUNTIME_SDK_MODULES = ['@aws-sdk/*', '@smithy/*'];

/** Environment every function of the app starts from (Powertools names). */
export const BASE_ENVIRONMENT: Readonly<Record<string, string>> = {
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_METRICS_NAMESPACE: 'EntityRecordApi',
};

/** For a function that reads the entity registry: a bundle has no entities/ directory, so the registry takes its file list from here. */
export function registryEnvironment(): Record<string, string> {
  return { [ENTITY_FILES_ENV]: entityFileNames().join(',') };
}

export interface BundledFunctionProps {
  description: string;
  /** The TypeScript file exporting `handler`. */
  entry: string;
  /** Code instead of bundling `entry` (tests only); its handler is `index.handler`. */
  code?: lambda.Code;
  timeout: Duration;
  memorySize?: number;
  environment: Record<string, string>;
  /** Files (relative to the project root) copied into the bundle at the same relative path. */
  bundleFiles?: readonly string[];
  /** Modules left to the Lambda runtime (default none: the AWS SDK of package-lock.json is bundled). */
  externalModules?: string[];
  /** Reserved concurrency (a cap, and a guarantee); default none. */
  reservedConcurrency?: number;
}

/**
 * esbuild, run locally by the asset's bundling (as NodejsFunction does, with code splitting,
 * which NodejsFunction's single output file cannot do): minified ESM, target ESBUILD_TARGET.
 *
 * - `index.mjs` holds what the handler module evaluates at load; every module reached only
 *   through `import()` (the AWS SDK, the operations: see shared/on-first-use.ts) goes to
 *   `chunks/`, which Node reads, parses and evaluates on the first request that imports it. A
 *   single file would be parsed whole at every cold start, and the Node built-ins its modules
 *   import (http, https, zlib, child_process, ...) would all be loaded there too, since esbuild
 *   hoists external imports to the top of their output file.
 * - A source map per file, without sources, read only when a stack is printed
 *   (runtime/stack-traces.ts, injected), instead of NODE_OPTIONS=--enable-source-maps.
 * - The require shim at the top of each file, for bundled CommonJS modules.
 * - esbuild's metafile as index.meta.json: the bundle tests and the cold-start bench read what
 *   each bundle holds from it (its output paths relative to the bundle).
 * - `bundleFiles` copied in at the same relative path.
 *
 * The asset hash is the output's, so a bundle is uploaded again only when it changed. The
 * fields of this object are part of CDK's bundling cache key: one per entry and options.
 */
export class EsbuildBundling implements ILocalBundling {
  constructor(
    readonly entry: string,
    readonly external: readonly string[],
    readonly bundleFiles: readonly string[],
  ) {}

  tryBundle(outputDir: string): boolean {
    const result = buildSync({
      absWorkingDir: PROJECT_ROOT,
      entryPoints: { index: this.entry },
      outdir: outputDir,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: ESBUILD_TARGET,
      mainFields: ['module', 'main'],
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      outExtension: { '.js': '.mjs' },
      minify: true,
      sourcemap: true,
      // Stack traces need the mappings, not the sources.
      sourcesContent: false,
      inject: [STACK_TRACES],
      banner: { js: REQUIRE_SHIM },
      external: [...this.external],
      tsconfig: path.join(PROJECT_ROOT, 'tsconfig.json'),
      metafile: true,
      logLevel: 'warning',
    });
    writeFileSync(path.join(outputDir, 'index.meta.json'), JSON.stringify(bundleRelative(result.metafile, outputDir)));
    for (const file of this.bundleFiles) {
      mkdirSync(path.dirname(path.join(outputDir, file)), { recursive: true });
      cpSync(path.join(PROJECT_ROOT, file), path.join(outputDir, file));
    }
    return true;
  }
}

/** The metafile with its output paths relative to the bundle directory (they name a temporary directory). */
function bundleRelative(metafile: Metafile, outputDir: string): Metafile {
  const relative = (file: string) => path.relative(outputDir, path.resolve(PROJECT_ROOT, file));
  const outputs: Metafile['outputs'] = {};
  for (const [file, output] of Object.entries(metafile.outputs)) {
    outputs[relative(file)] = { ...output, imports: output.imports.map((edge) => (edge.external ? edge : { ...edge, path: relative(edge.path) })) };
  }
  return { inputs: metafile.inputs, outputs };
}

/** The code of a bundled function: `entry` bundled by EsbuildBundling. */
export function bundledCode(entry: string, options: { external?: readonly string[]; bundleFiles?: readonly string[] } = {}): lambda.Code {
  return lambda.Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      local: new EsbuildBundling(entry, options.external ?? [], options.bundleFiles ?? []),
      // Never pulled: local bundling always succeeds or throws.
      image: DockerImage.fromRegistry('dummy'),
    },
  });
}

/**
 * A function bundled the way all of this app's functions are (EsbuildBundling, the AWS SDK inside
 * unless `externalModules` says otherwise), LAMBDA_RUNTIME on arm64, X-Ray tracing, and its own log
 * group (`<id>Logs`, one month) next to it in `scope`.
 */
export function createBundledFunction(scope: Construct, id: string, props: BundledFunctionProps): NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: logs.RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  return new NodejsFunction(scope, id, {
    description: props.description,
    code: props.code ?? bundledCode(props.entry, { external: props.externalModules, bundleFiles: props.bundleFiles }),
    handler: 'index.handler',
    runtime: LAMBDA_RUNTIME,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memorySize ?? 512,
    timeout: props.timeout,
    tracing: lambda.Tracing.ACTIVE,
    logGroup,
    // Lambda's own lines (START, REPORT, errors) as JSON too, beside Powertools' JSON lines.
    loggingFormat: lambda.LoggingFormat.JSON,
    ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
    environment: props.environment,
  });
}

/**
 * A family's function timeout: a streaming family runs up to API Gateway's streaming limit; any
 * other stays below the 29 s integration timeout by Lambda's longest init phase (shared/http/deadline.ts).
 */
export function functionTimeoutSeconds(family: string): number {
  return (STREAMING_FAMILIES as readonly string[]).includes(family) ? STREAMING_TIMEOUT_SECONDS : API_FUNCTION_TIMEOUT_SECONDS;
}

export interface FamilyFunctionsProps {
  families: readonly string[];
  tables: Tables;
  /** Extra environment for every function (ALLOWED_ORIGINS, rate limits, ...). */
  environment?: Record<string, string>;
  /**
   * Code for every function instead of bundling functions/<family>/handler.ts. Only for tests
   * that must not depend on which handler files exist yet.
   */
  code?: lambda.Code;
  /** Reserved concurrency by family (context reservedConcurrency); families not named get none. */
  reservedConcurrency?: Readonly<Record<string, number>>;
}

export class FamilyFunctions extends Construct {
  readonly byFamily = new Map<string, lambda.Function>();

  constructor(scope: Construct, id: string, props: FamilyFunctionsProps) {
    super(scope, id);
    const environment: Record<string, string> = {
      ...BASE_ENVIRONMENT,
      // API Gateway serves HTTPS only, so session cookies are always Secure.
      SECURE_COOKIES: '1',
      ...registryEnvironment(),
      ...props.environment,
    };
    for (const [tableId, table] of Object.entries(props.tables) as [TableId, Tables[TableId]][]) {
      if (table) environment[tableEnvName(tableId)] = table.tableName;
    }

    for (const family of props.families) {
      const name = pascal(family);
      const entry = handlerEntry(family);
      if (!props.code && !existsSync(entry)) {
        throw new Error(
          `Family '${family}' has routes in shared/routes.ts but no handler: ${path.relative(PROJECT_ROOT, entry)} does not exist (it must export 'handler')`,
        );
      }
      const fn = createBundledFunction(this, name, {
        description: `Entity Record API: ${family} operations`,
        entry,
        code: props.code,
        timeout: Duration.seconds(functionTimeoutSeconds(family)),
        environment,
        bundleFiles: bundleFilesFor(family),
        externalModules: RUNTIME_SDK_FAMILIES.has(family) ? RUNTIME_SDK_MODULES : undefined,
        reservedConcurrency: props.reservedConcurrency?.[family],
      });
      grantTableAccess(fn, family, props.tables);
      this.byFamily.set(family, fn);
    }
  }

  get(family: string): lambda.Function {
    const fn = this.byFamily.get(family);
    if (!fn) throw new Error(`No function for family '${family}'`);
    return fn;
  }
}

/**
 * The whole local stack behind `npm start` (and the test harness): DynamoDB Local (unless
 * DYNAMODB_ENDPOINT names another engine), the tables, the bootstrap admin, the gateway, and the
 * supervisor that restarts the engine, the S3 server and the webhook workers when they stop.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { config, resetConfig } from '../../shared/config.js';
import { createDynamoClient } from '../../shared/data/client.js';
import { DEFAULT_ADMIN_EMAIL, ensureBootstrapAdmin } from '../../shared/auth/bootstrap.js';
import { verifyPassword } from '../../shared/auth/passwords.js';
import { onSignIn } from '../../shared/auth/sign-in-listeners.js';
import { getUserByEmail, normalizeEmail } from '../../shared/data/identity.js';
import { clearPendingPassword, pendingPasswordPath, readPendingPassword, writePendingPassword } from './admin-password.js';
import { loadRegistry } from '../../shared/registry/index.js';
import { ensureDashboardBuilt } from '../../dashboard/build.js';
import { startDynamoLocal, type DynamoLocal } from './dynamodb-local.js';
import { useLocalDeploymentSecret } from './deployment-secret.js';
import { createGateway } from './gateway.js';
import { checkPlugins } from './plugins.js';
import { startObjectStorage, type LocalObjectStorage } from './object-storage.js';
import { ensureTables } from './tables.js';
import { releaseEarlierLocks } from './idempotency-locks.js';
import { startLocalWebhooks } from './webhooks.js';
import { Supervisor } from './supervisor.js';
import { seedDemo, type SeedResult } from './seed.js';
import { prepareMigrations, startMigrations, type BackgroundMigrations } from './migrations.js';

/**
 * Sockets each DynamoDB client of the local runtime may open (DYNAMODB_MAX_SOCKETS unless set).
 * The SDK's 50 suit a Lambda container, which serves one request at a time; here one process
 * serves them all, and 16 clients kept more than 150 DynamoDB calls waiting for a socket.
 */
export const LOCAL_DYNAMODB_SOCKETS = 256;

/** In DATA_DIR while `npm start` runs its engine: the engine's endpoint. */
export const ENGINE_ENDPOINT_FILE = 'dynamodb-local.endpoint';

export interface LocalStackOptions {
  host: string;
  port: number;
  /** Where DynamoDB Local persists; undefined keeps data in memory. */
  dataDir?: string;
  /** An engine that is already running; DynamoDB Local is not started then. */
  dynamoEndpoint?: string;
  admin?: { email?: string; password?: string };
  /**
   * Called when a supervised part (the engine, the S3 server, the webhook workers) keeps failing
   * and is given up on, with a message saying what to do; the caller stops the stack.
   */
  onGiveUp?: (message: string) => void;
  /** `demo`: load the sample data (infra/local/seed.ts) when the database starts empty. */
  seed?: string;
}

export interface LocalStack {
  url: string;
  dynamoEndpoint: string;
  /** Set when the bootstrap admin was created with a generated password (printed once). */
  generatedAdmin?: { email: string; password: string };
  /** The parts of the stack restarting now (empty when all run). */
  down(): string[];
  /**
   * The bootstrap admin, and its generated password while the admin has not signed in with it
   * yet (kept in `passwordFile`, DATA_DIR/admin-password, until then).
   */
  admin: { email: string; password?: string; passwordFile?: string };
  /** What SEED=demo did: the sample data and how to sign in, or why nothing was loaded. */
  seeded?: SeedResult | { skipped: string };
  stop(): Promise<void>;
}

const ENGINE_ADVICE =
  'Look at the lines above for the engine\'s own error; check free memory and disk space (DYNAMODB_LOCAL_HEAP sets its heap), then run npm start again. To run without the embedded engine, set DYNAMODB_ENDPOINT to another one.';
const S3_ADVICE = 'Check that DATA_DIR/s3 is writable and the disk is not full, then run npm start again (or set S3_ENDPOINT to another S3-compatible server).';
const WORKERS_ADVICE = 'Check that DATA_DIR/webhooks is writable and the disk is not full, then run npm start again.';

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const startedAt = Date.now();
  const supervisor = new Supervisor(
    options.onGiveUp ??
      ((message) => {
        console.error(message);
        process.exit(1);
      }),
  );
  // "Empty" is judged before the engine creates its database file.
  const freshData = !options.dataDir || !existsSync(join(options.dataDir, 'shared-local-instance.db'));
  let engine: DynamoLocal | undefined;
  const dynamoEndpoint = options.dynamoEndpoint ?? (engine = await startDynamoLocal({ dataDir: options.dataDir })).endpoint;
  // `npm run migrate` finds the running engine of this DATA_DIR here (bin/migrate.ts).
  const endpointFile = engine && options.dataDir ? join(resolve(options.dataDir), ENGINE_ENDPOINT_FILE) : undefined;
  if (endpointFile) writeFileSync(endpointFile, `${dynamoEndpoint}\n`);
  // Handlers read the endpoint through config(), exactly as they read it on Lambda.
  process.env.DYNAMODB_ENDPOINT = dynamoEndpoint;
  // One process serves every request here, where each Lambda container serves one.
  process.env.DYNAMODB_MAX_SOCKETS ||= String(LOCAL_DYNAMODB_SOCKETS);
  resetConfig();
  useLocalDeploymentSecret(options.dataDir);
  let objects: LocalObjectStorage | undefined;
  let webhooks: Awaited<ReturnType<typeof startLocalWebhooks>>;
  let migrations: BackgroundMigrations | undefined;
  try {
    objects = await startObjectStorage({ dataDir: options.dataDir });
    const client = createDynamoClient();
    await ensureTables(client);
    if (engine) await releaseEarlierLocks(client, startedAt);
    client.destroy();
    const adminEmail = normalizeEmail(options.admin?.email || DEFAULT_ADMIN_EMAIL);
    // The password is kept beside the database it opens: only when the engine is our own on DATA_DIR.
    const dataDir = options.dynamoEndpoint ? undefined : options.dataDir;
    const pending = dataDir ? readPendingPassword(dataDir) : undefined;
    const generatedAdmin = await ensureBootstrapAdmin({
      email: adminEmail,
      password: options.admin?.password,
      generatedPassword: pending?.email === adminEmail ? pending.password : undefined,
      rememberGenerated: dataDir ? (credentials) => writePendingPassword(dataDir, credentials) : undefined,
    });
    const admin: LocalStack['admin'] = { email: adminEmail, password: generatedAdmin?.password };
    if (dataDir) admin.password = await pendingPasswordToShow(dataDir, adminEmail);
    if (admin.password && dataDir) admin.passwordFile = pendingPasswordPath(dataDir);
    // A bad entity definition stops start-up here, not at the first request.
    await loadRegistry();
    // Layouts recorded and served before the first request; their migrations run in the background.
    const states = await prepareMigrations();
    await checkPlugins();
    // The dashboard's files, rebuilt when a source changed since the last build.
    ensureDashboardBuilt();
    let seeded: LocalStack['seeded'];
    if (options.seed === 'demo') seeded = freshData || options.dynamoEndpoint ? await seedDemo() : { skipped: `SEED=demo loads the sample data into an empty DATA_DIR only; ${options.dataDir} has data: run npm run seed to add it` };
    else if (options.seed) seeded = { skipped: `SEED=${options.seed} is not known: the one sample data set is SEED=demo` };
    webhooks = await startLocalWebhooks(options.dataDir);
    if (engine) {
      const started = engine;
      supervisor.watch('DynamoDB Local', started.running(), {
        essential: true,
        advice: ENGINE_ADVICE,
        restart: async () => {
          const running = await started.restart();
          // An engine in memory comes back empty: its tables and the admin are made again.
          if (!options.dataDir) await prepareEngine(options).catch((error: unknown) => console.error(`could not prepare the restarted engine: ${(error as Error).message}`));
          return running;
        },
      });
    }
    if (objects.running && objects.restart) supervisor.watch('the local S3 server', objects.running(), { advice: S3_ADVICE, restart: objects.restart });
    if (webhooks) supervisor.watch('the webhook workers', webhooks.running(), { advice: WORKERS_ADVICE, restart: webhooks.restart });
    const server = createGateway(undefined, { down: () => supervisor.down(), essentialDown: () => supervisor.essentialDown() });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    migrations = startMigrations(states, { control: true });
    return {
      url: `http://${options.host}:${port}`,
      dynamoEndpoint,
      generatedAdmin,
      down: () => supervisor.down(),
      admin,
      seeded,
      stop: async () => {
        supervisor.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await migrations?.stop();
        if (endpointFile) rmSync(endpointFile, { force: true });
        await objects?.stop();
        await webhooks?.stop();
        await engine?.stop();
      },
    };
  } catch (error) {
    supervisor.stop();
    await objects?.stop();
    await webhooks?.stop();
    await engine?.stop();
    throw error;
  }
}

/** The tables and the bootstrap admin on an engine that restarted empty (in memory). */
async function prepareEngine(options: LocalStackOptions): Promise<void> {
  const client = createDynamoClient();
  try {
    await ensureTables(client);
  } finally {
    client.destroy();
  }
  await ensureBootstrapAdmin({ email: options.admin?.email, password: options.admin?.password });
}

/**
 * The generated password still to show: it opens the admin's account and the admin has not
 * signed in with it. One that no longer opens it is forgotten; one that does is forgotten at
 * the admin's first sign-in through this process.
 */
async function pendingPasswordToShow(dataDir: string, adminEmail: string): Promise<string | undefined> {
  const pending = readPendingPassword(dataDir);
  if (!pending) return undefined;
  const user = await getUserByEmail(pending.email);
  if (!user || !(await verifyPassword(pending.password, user.passwordHash))) {
    clearPendingPassword(dataDir);
    return undefined;
  }
  const stopListening = onSignIn((signedIn) => {
    if (signedIn.id !== user.id) return;
    clearPendingPassword(dataDir);
    stopListening();
  });
  return pending.email === adminEmail ? pending.password : undefined;
}

export { config };

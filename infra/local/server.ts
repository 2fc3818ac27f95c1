/**
 * The whole local stack behind `npm start` (and the test harness): DynamoDB Local (unless
 * DYNAMODB_ENDPOINT names another engine), the tables, the bootstrap admin, the gateway.
 */
import { rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { config, resetConfig } from '../../shared/config.js';
import { createDynamoClient } from '../../shared/data/client.js';
import { ensureBootstrapAdmin } from '../../shared/auth/bootstrap.js';
import { loadRegistry } from '../../shared/registry/index.js';
import { startDynamoLocal, type DynamoLocal } from './dynamodb-local.js';
import { useLocalDeploymentSecret } from './deployment-secret.js';
import { createGateway } from './gateway.js';
import { checkPlugins } from './plugins.js';
import { startObjectStorage, type LocalObjectStorage } from './object-storage.js';
import { ensureTables } from './tables.js';
import { releaseEarlierLocks } from './idempotency-locks.js';
import { startLocalWebhooks } from './webhooks.js';
import { prepareMigrations, startMigrations, type BackgroundMigrations } from './migrations.js';

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
}

export interface LocalStack {
  url: string;
  dynamoEndpoint: string;
  /** Set when the bootstrap admin was created with a generated password (printed once). */
  generatedAdmin?: { email: string; password: string };
  stop(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const startedAt = Date.now();
  let engine: DynamoLocal | undefined;
  const dynamoEndpoint = options.dynamoEndpoint ?? (engine = await startDynamoLocal({ dataDir: options.dataDir })).endpoint;
  // `npm run migrate` finds the running engine of this DATA_DIR here (bin/migrate.ts).
  const endpointFile = engine && options.dataDir ? join(resolve(options.dataDir), ENGINE_ENDPOINT_FILE) : undefined;
  if (endpointFile) writeFileSync(endpointFile, `${dynamoEndpoint}\n`);
  // Handlers read the endpoint through config(), exactly as they read it on Lambda.
  process.env.DYNAMODB_ENDPOINT = dynamoEndpoint;
  resetConfig();
  useLocalDeploymentSecret(options.dataDir);
  let objects: LocalObjectStorage | undefined;
  let webhooks: Awaited<ReturnType<typeof startLocalWebhooks>>;
  let migrations: BackgroundMigrations | undefined;
  try {
    objects = await startObjectStorage({ dataDir: options.dataDir, host: options.host });
    const client = createDynamoClient();
    await ensureTables(client);
    if (engine) await releaseEarlierLocks(client, startedAt);
    client.destroy();
    const generatedAdmin = await ensureBootstrapAdmin({ email: options.admin?.email, password: options.admin?.password });
    // A bad entity definition stops start-up here, not at the first request.
    await loadRegistry();
    // Layouts recorded and served before the first request; their migrations run in the background.
    const states = await prepareMigrations();
    await checkPlugins();
    webhooks = await startLocalWebhooks(options.dataDir);
    const server = createGateway();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    migrations = startMigrations(states);
    return {
      url: `http://${options.host}:${port}`,
      dynamoEndpoint,
      generatedAdmin,
      stop: async () => {
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
    await objects?.stop();
    await webhooks?.stop();
    await engine?.stop();
    throw error;
  }
}

export { config };

/**
 * Where the admin CLI's chores (users, tenants, keys, passwords) read and write: the same tables
 * the API uses, through the same domain code.
 *
 * - `ADMIN_TARGET=aws`: the deployment's tables (TABLE_* from the stack's outputs) with the AWS
 *   credentials of the environment (profile, SSO, role), in AWS_REGION.
 * - `DYNAMODB_ENDPOINT` (or AWS_ENDPOINT_URL_DYNAMODB): that engine.
 * - Otherwise DATA_DIR (`.data`): the engine `npm start` runs there, or, when none runs, a
 *   DynamoDB Local started on it for the command and stopped after it.
 */
import { resetConfig } from '../../shared/config.js';
import { createDynamoClient } from '../../shared/data/client.js';
import { runningEngineEndpoint, startDynamoLocal } from '../../infra/local/dynamodb-local.js';
import { useLocalDeploymentSecret } from '../../infra/local/deployment-secret.js';
import { ensureTables } from '../../infra/local/tables.js';

export interface Database {
  /** Said to the operator: which tables the command used. */
  where: string;
  /** DATA_DIR when the tables are the local ones (the admin's pending password lives there). */
  dataDir?: string;
  close(): Promise<void>;
}

export function dataDir(): string {
  return process.env.DATA_DIR || '.data';
}

export async function openDatabase(): Promise<Database> {
  if (process.env.ADMIN_TARGET === 'aws') {
    delete process.env.DYNAMODB_ENDPOINT;
    delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
    if (!process.env.TABLE_IDENTITY) throw new Error('ADMIN_TARGET=aws needs the deployment\'s table names: set TABLE_IDENTITY, TABLE_RECORDS, ... from the stack\'s outputs (see docs/operating.md)');
    resetConfig();
    return { where: `AWS (${process.env.AWS_REGION ?? 'default region'}, table ${process.env.TABLE_IDENTITY})`, close: async () => undefined };
  }
  const given = process.env.DYNAMODB_ENDPOINT || process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (given) {
    process.env.DYNAMODB_ENDPOINT = given;
    resetConfig();
    return { where: given, close: async () => undefined };
  }
  const dir = dataDir();
  useLocalDeploymentSecret(dir);
  const running = runningEngineEndpoint(dir);
  if (running) {
    process.env.DYNAMODB_ENDPOINT = running;
    resetConfig();
    return { where: `${dir} (through the running npm start)`, dataDir: dir, close: async () => undefined };
  }
  const engine = await startDynamoLocal({ dataDir: dir });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  resetConfig();
  const client = createDynamoClient();
  await ensureTables(client);
  client.destroy();
  return { where: dir, dataDir: dir, close: () => engine.stop() };
}

/**
 * The health check: one cheap DescribeTable, bounded by a short timeout. The SDK is imported on
 * the first check, not at module load: the health function's bundle leaves it out and uses the
 * Lambda runtime's AWS SDK v3 (infra/aws/functions.ts), so its cold start loads almost nothing.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { config } from '../config.js';
import { dynamoClientOptions } from './client-options.js';
import { accountCalls } from './call-accounting.js';
import { logger } from '../logger.js';

export interface Health {
  status: 'ok' | 'unavailable';
  version: string;
  timestamp: string;
}

const TIMEOUT_MS = 2000;

let describe: Promise<(tableName: string, signal: AbortSignal) => Promise<unknown>> | undefined;

function describeTable(): NonNullable<typeof describe> {
  describe ??= import('@aws-sdk/client-dynamodb').then(({ DynamoDBClient: Client, DescribeTableCommand }) => {
    const client: DynamoDBClient = new Client(dynamoClientOptions());
    accountCalls(client);
    return (tableName, signal) => client.send(new DescribeTableCommand({ TableName: tableName }), { abortSignal: signal });
  });
  // A failed import is retried by the next check.
  describe.catch(() => (describe = undefined));
  return describe;
}

export async function checkHealth(): Promise<Health> {
  const base = { version: config().version, timestamp: new Date().toISOString() };
  try {
    const send = await describeTable();
    await send(config().tables.identity, AbortSignal.timeout(TIMEOUT_MS));
    return { status: 'ok', ...base };
  } catch (error) {
    logger.warn('health check failed', { error: (error as Error).name });
    return { status: 'unavailable', ...base };
  }
}

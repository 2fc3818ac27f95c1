/** The health check: one cheap DescribeTable, bounded by a short timeout. */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { config } from './config.js';
import { db, tableName } from './data/client.js';
import { logger } from './logger.js';

export interface Health {
  status: 'ok' | 'unavailable';
  version: string;
  timestamp: string;
}

const TIMEOUT_MS = 2000;

export async function checkHealth(): Promise<Health> {
  const base = { version: config().version, timestamp: new Date().toISOString() };
  try {
    await db().send(new DescribeTableCommand({ TableName: tableName('identity') }), { abortSignal: AbortSignal.timeout(TIMEOUT_MS) });
    return { status: 'ok', ...base };
  } catch (error) {
    logger.warn('health check failed', { error: (error as Error).name });
    return { status: 'unavailable', ...base };
  }
}

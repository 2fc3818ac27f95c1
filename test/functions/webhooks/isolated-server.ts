/**
 * A local server of its own for webhook tests: on the shared DynamoDB Local but with tables of
 * its own (TABLE_* names), so its stream poller and queue see only this test's events, and with
 * its own DATA_DIR (queue journals, stream checkpoint).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { startServer, type TestServer } from '../../support/server.js';

export function isolatedTables(): Record<string, string> {
  const suffix = randomBytes(4).toString('hex');
  return Object.fromEntries(['RECORDS', 'EVENTS', 'HISTORY', 'IDENTITY', 'LIMITS', 'WEBHOOKS'].map((t) => [`TABLE_${t}`, `wh-${suffix}-${t.toLowerCase()}`]));
}

export function newDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'webhooks-int-'));
}

export function startIsolatedServer(env: Record<string, string>): Promise<TestServer> {
  return startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ALLOW_INSECURE_WEBHOOKS: '1', WEBHOOK_RETRY_SCHEDULE: '1,1', ...env } });
}

import { afterEach, describe, expect, it, vi } from 'vitest';
import { resetConfig } from '../../../shared/config.js';
import { logger } from '../../../shared/logger.js';
import { createPublicHandler } from '../../../shared/http/public-stack.js';
import { healthRoutes } from '../../../shared/route-declarations/index.js';
import { requestLogEntry } from '../../../shared/http/request-metrics.js';
import { RequestUsage } from '../../../shared/data/usage.js';
import { lambdaContext, proxyEvent } from '../../support/events.js';

/** The operation its declaration names for GET /api/health. */
const HEALTH = 'getHealth';

describe('request log', () => {
  afterEach(() => {
    delete process.env.REQUEST_LOG;
    resetConfig();
    vi.restoreAllMocks();
  });

  it('logs one line per request with the caller type, status, latency and both request ids when REQUEST_LOG is on', async () => {
    process.env.REQUEST_LOG = 'on';
    resetConfig();
    const info = vi.spyOn(logger, 'info').mockImplementation(() => undefined);
    const handler = createPublicHandler(healthRoutes, { [HEALTH]: async () => ({ data: { ok: true } }) });
    const event = proxyEvent({ method: 'GET', path: '/api/health', headers: { 'X-Request-ID': 'client-1' } });

    await handler(event, lambdaContext());

    const lines = info.mock.calls.filter(([message]) => message === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0][1]).toMatchObject({
      requestId: 'client-1',
      gatewayRequestId: event.requestContext.requestId,
      method: 'GET',
      resource: '/api/health',
      status: 200,
      callerType: 'anonymous',
      dynamodbCalls: 0,
    });
    expect(typeof (lines[0][1] as { latencyMs: unknown }).latencyMs).toBe('number');
  });

  it('logs nothing per request by default', async () => {
    const info = vi.spyOn(logger, 'info').mockImplementation(() => undefined);
    const handler = createPublicHandler(healthRoutes, { [HEALTH]: async () => ({ data: { ok: true } }) });

    await handler(proxyEvent({ method: 'GET', path: '/api/health' }), lambdaContext());

    expect(info.mock.calls.filter(([message]) => message === 'request')).toHaveLength(0);
  });

  it('names an API key caller and its tenant, never the key', () => {
    const usage = new RequestUsage(undefined);
    const context = {
      api: { requestId: 'r1', route: { path: '/api/v1/tasks' }, auth: { type: 'api_key', keyId: 'key_1', tenantId: 'tnt_1', user: { id: 'usr_1' }, scopes: [] } },
    } as never;

    const entry = requestLogEntry({ httpMethod: 'GET', requestContext: { requestId: 'gw-1' } } as never, context, { statusCode: 200 }, usage);

    expect(entry).toMatchObject({ callerType: 'api_key', tenantId: 'tnt_1', status: 200, gatewayRequestId: 'gw-1', resource: '/api/v1/tasks' });
    expect(JSON.stringify(entry)).not.toContain('key_1');
  });
});

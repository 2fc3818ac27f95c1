/** GET /api/health (public): {status, version, timestamp}; 503 with the same shape when DynamoDB does not answer. */
import { createApiHandler } from '../../shared/http/stack.js';
import { checkHealth } from '../../shared/health.js';
import { routeKey } from '../../shared/routes.js';

export const handler = createApiHandler({
  [routeKey('GET', '/api/health')]: async () => {
    const health = await checkHealth();
    return { status: health.status === 'ok' ? 200 : 503, raw: health, headers: { 'Cache-Control': 'no-store' } };
  },
});

/** GET /api/health (public): {status, version, timestamp}; 503 with the same shape when DynamoDB does not answer. */
import { createPublicHandler } from '../../shared/http/public-stack.js';
import { checkHealth } from '../../shared/data/health.js';
import { routeKey } from '../../shared/core-routes.js';

export const handler = createPublicHandler({
  [routeKey('GET', '/api/health')]: async () => {
    const health = await checkHealth();
    return { status: health.status === 'ok' ? 200 : 503, raw: health, headers: { 'Cache-Control': 'no-store' } };
  },
});

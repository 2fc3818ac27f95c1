/** GET /api/health (public): {status, version, timestamp}; 503 with the same shape when DynamoDB does not answer. */
import { createPublicHandler } from '../../shared/http/public-stack.js';
import { checkHealth } from '../../shared/data/health.js';
import { healthRoutes } from '../../shared/route-declarations/health.js';

export const handler = createPublicHandler(healthRoutes, {
  getHealth: async () => {
    const health = await checkHealth();
    return { status: health.status === 'ok' ? 200 : 503, raw: health, headers: { 'Cache-Control': 'no-store' } };
  },
});

/**
 * The dashboard family: the web console at /dashboard and its hashed assets, served on the API's
 * own origin (so the session cookie, the CSRF guard and the rate limits apply unchanged). Public
 * and never rate-limited, like the docs: the files hold no data; every call they make is counted.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import { routeKey } from '../../shared/core-routes.js';
import { dashboardAsset, dashboardPage } from './files.js';

export const handler = createApiHandler({
  [routeKey('GET', '/dashboard')]: async () => {
    const page = dashboardPage();
    return { text: page.body, headers: page.headers };
  },
  [routeKey('GET', '/dashboard/{asset}')]: async (req) => {
    const asset = dashboardAsset(req.params.asset);
    return { text: asset.body, headers: asset.headers };
  },
});

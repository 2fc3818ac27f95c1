/**
 * The dashboard family: the web console at /dashboard and its hashed assets, served on the API's
 * own origin (so the session cookie, the CSRF guard and the rate limits apply unchanged). Public
 * and never rate-limited, like the docs: the files hold no data; every call they make is counted.
 */
import { createApiHandler } from '../../shared/http/stack.js';
import type { FamilyOperations } from '../../shared/http/types.js';
import { dashboardAsset, dashboardPage } from './files.js';

const operations: FamilyOperations<'dashboard'> = {
  getDashboard: async () => {
    const page = dashboardPage();
    return { text: page.body, headers: page.headers };
  },
  getDashboardAsset: async (req) => {
    const asset = dashboardAsset(req.params.asset);
    return { text: asset.body, headers: asset.headers };
  },
};

export const handler = createApiHandler(operations);

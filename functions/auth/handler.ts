/**
 * The auth family: login, logout, refresh, console sign-in through an identity provider, the
 * caller's user, a tenant's users, tenants. Thin: every decision is in shared/auth/users.ts and
 * shared/auth/oidc-console.ts, loaded (with the AWS SDK, and `jose` for the latter) on first use.
 */
import type { LoginResult } from '../../shared/auth/users.js';
import type { ApiRequest, Reply } from '../../shared/http/types.js';
import { logger } from '../../shared/logger.js';
import { apiPath } from '../../shared/urls.js';
import { createApiHandler, type Operations } from '../../shared/http/stack.js';
import { routeKey } from '../../shared/core-routes.js';
import { onFirstUse } from '../../shared/on-first-use.js';

const V1 = '/api/v1';
const NO_STORE = { 'Cache-Control': 'no-store' };
const signInCode = onFirstUse(() => import('../../shared/auth/oidc-console.js'));

function redirect(location: string): Reply {
  return { status: 302, headers: { ...NO_STORE, Location: location }, text: '' };
}

async function loadOperations() {
  const [
    {
      createTenantAsOperator,
      createTenantUserAsAdmin,
      deleteUserAsAdmin,
      getMe,
      getMyTenant,
      getUserAsAdmin,
      listUsersAsAdmin,
      login,
      logout,
      refresh,
      updateMe,
      updateMyTenant,
      updateUserAsAdmin,
    },
    { SESSION_COOKIE, clearedSessionCookie, sessionCookie },
  ] = await Promise.all([import('../../shared/auth/users.js'), import('../../shared/auth/sessions.js')]);

  function withSession(req: ApiRequest, result: LoginResult): Reply {
    req.responseCookies.push(sessionCookie(result.token, result.expiresAt - Math.floor(Date.now() / 1000)));
    return { status: 200, headers: NO_STORE, data: { user: result.user, expiresAt: new Date(result.expiresAt * 1000).toISOString() } };
  }

  async function refreshSession(req: ApiRequest): Promise<Reply> {
    return withSession(req, await refresh(req.auth));
  }

  const operations: Operations = {
    [routeKey('POST', `${V1}/auth/login`)]: async (req) => withSession(req, await login(req.body, req.cookies[SESSION_COOKIE])),
    [routeKey('POST', `${V1}/auth/logout`)]: async (req) => {
      const { issuer } = await logout(req.auth);
      req.responseCookies.push(clearedSessionCookie());
      // Signed in through an identity provider: its own sign-out is offered too.
      const endSession = issuer ? await (await signInCode()).endSessionUrl(issuer, req) : undefined;
      return { status: 200, headers: NO_STORE, message: 'Logged out', ...(endSession ? { data: { endSession } } : {}) };
    },
    [routeKey('GET', `${V1}/auth/oidc`)]: async () => ({ data: (await signInCode()).signInProviders() }),
    [routeKey('GET', `${V1}/auth/oidc/{provider}`)]: async (req) => {
      const { startSignIn, SignInFailed } = await signInCode();
      try {
        const { location, cookie } = await startSignIn(req.params.provider, req);
        req.responseCookies.push(cookie);
        return redirect(location);
      } catch (error) {
        if (error instanceof SignInFailed) return redirect(apiPath(req, '/dashboard?signin=failed'));
        throw error;
      }
    },
    [routeKey('GET', `${V1}/auth/oidc/callback`)]: async (req) => {
      const { clearedFlowCookie, finishSignIn, FLOW_COOKIE, SignInFailed } = await signInCode();
      req.responseCookies.push(clearedFlowCookie(req));
      try {
        const session = await finishSignIn(req.query, req.cookies[FLOW_COOKIE], req, req.cookies[SESSION_COOKIE]);
        req.responseCookies.push(sessionCookie(session.token, session.expiresAt - Math.floor(Date.now() / 1000)));
        return redirect(apiPath(req, '/dashboard'));
      } catch (error) {
        if (!(error instanceof SignInFailed)) throw error;
        logger.warn('console sign-in failed', { requestId: req.requestId, reason: error.reason });
        return redirect(apiPath(req, `/dashboard?signin=${error.outcome}`));
      }
    },
    [routeKey('POST', `${V1}/auth/refresh`)]: refreshSession,
    [routeKey('POST', `${V1}/auth`)]: refreshSession,

    [routeKey('GET', `${V1}/users/me`)]: async (req) => ({ data: await getMe(req.auth) }),
    [routeKey('PATCH', `${V1}/users/me`)]: async (req) => ({ data: await updateMe(req.auth, req.body) }),
    [routeKey('GET', `${V1}/users`)]: async (req) => ({ data: await listUsersAsAdmin(req.auth) }),
    [routeKey('POST', `${V1}/users`)]: async (req) => ({ status: 201, data: await createTenantUserAsAdmin(req.auth, req.body) }),
    [routeKey('GET', `${V1}/users/{id}`)]: async (req) => ({ data: await getUserAsAdmin(req.auth, req.params.id) }),
    [routeKey('PATCH', `${V1}/users/{id}`)]: async (req) => ({ data: await updateUserAsAdmin(req.auth, req.params.id, req.body) }),
    [routeKey('DELETE', `${V1}/users/{id}`)]: async (req) => ({ data: await deleteUserAsAdmin(req.auth, req.params.id), message: 'User deleted' }),

    [routeKey('GET', `${V1}/tenants/me`)]: async (req) => ({ data: await getMyTenant(req.auth) }),
    [routeKey('PATCH', `${V1}/tenants/me`)]: async (req) => ({ data: await updateMyTenant(req.auth, req.body) }),
    [routeKey('POST', `${V1}/tenants`)]: async (req) => ({ status: 201, data: await createTenantAsOperator(req.auth, req.body) }),
  };
  return { operations };
}

export const handler = createApiHandler(loadOperations);

/**
 * The auth family: login, logout, refresh, console sign-in through an identity provider, the
 * caller's user, a tenant's users, tenants. Thin: every decision is in shared/auth/users.ts and
 * shared/auth/oidc-console.ts, loaded (with the AWS SDK, and `jose` for the latter) on first use.
 */
import type { LoginResult } from '../../shared/auth/users.js';
import type { ApiRequest, FamilyOperations, Reply } from '../../shared/http/types.js';
import { createApiHandler } from '../../shared/http/stack.js';
import { logger } from '../../shared/logger.js';
import { onFirstUse } from '../../shared/on-first-use.js';
import { apiPath } from '../../shared/urls.js';

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

  const operations: FamilyOperations<'auth'> = {
    login: async (req) => withSession(req, await login(req.body, req.cookies[SESSION_COOKIE])),
    logout: async (req) => {
      const { issuer } = await logout(req.auth);
      req.responseCookies.push(clearedSessionCookie());
      // Signed in through an identity provider: its own sign-out is offered too.
      const endSession = issuer ? await (await signInCode()).endSessionUrl(issuer, req) : undefined;
      return { status: 200, headers: NO_STORE, message: 'Logged out', ...(endSession ? { data: { endSession } } : {}) };
    },
    listSignInProviders: async () => ({ data: (await signInCode()).signInProviders() }),
    startSignIn: async (req) => {
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
    finishSignIn: async (req) => {
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
    refreshSession,
    refreshSessionShort: refreshSession,

    getMe: async (req) => ({ data: await getMe(req.auth) }),
    updateMe: async (req) => ({ data: await updateMe(req.auth, req.body) }),
    listUsers: async (req) => ({ data: await listUsersAsAdmin(req.auth) }),
    createUser: async (req) => ({ status: 201, data: await createTenantUserAsAdmin(req.auth, req.body) }),
    getUser: async (req) => ({ data: await getUserAsAdmin(req.auth, req.params.id) }),
    updateUser: async (req) => ({ data: await updateUserAsAdmin(req.auth, req.params.id, req.body) }),
    deleteUser: async (req) => ({ data: await deleteUserAsAdmin(req.auth, req.params.id), message: 'User deleted' }),

    getMyTenant: async (req) => ({ data: await getMyTenant(req.auth) }),
    updateMyTenant: async (req) => ({ data: await updateMyTenant(req.auth, req.body) }),
    createTenant: async (req) => ({ status: 201, data: await createTenantAsOperator(req.auth, req.body) }),
  };
  return { operations };
}

export const handler = createApiHandler(loadOperations);

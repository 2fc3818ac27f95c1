/**
 * A development OpenID Provider on 127.0.0.1 (`DEV_OIDC=1 npm start`, or run on its own by the
 * tests): the certified `oidc-provider` package with a few sample users and one service client,
 * so that console sign-in and the API's bearer tokens can be tried without a company's IdP.
 *
 * - People sign in on its own login page (sample users below, or DEV_OIDC_CONFIG's); their ID
 *   tokens carry `email`, `name`, `tenant` and `role`. No consent screen: the console is first-party.
 * - Programs get JWT access tokens for the API (audience `<API URL>/api/v1`) with the client
 *   credentials grant: `sub` is the client id, `tenant` and `role` those of the client.
 * - Signing out of the console offers its end-session page (RP-initiated logout).
 * - Its keys are made at start (RS256) unless given; its sessions and grants live in memory.
 *
 * DEV_OIDC_CONFIG (JSON, optional): {users?, services?, keys?} replace the samples: users
 * `{login, password, email, name, role?, tenant?}`, services `{clientId, secret, role?, tenant?}`,
 * keys private JWKs (the first signs).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import Provider, { errors as oidcErrors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import { resetConfig } from '../../shared/config.js';
import { DEFAULT_TENANT_ID } from '../../shared/data/index.js';
import { loadRegistry } from '../../shared/registry/index.js';
import { ACTIONS } from '../../shared/scopes.js';
import { SYSTEM_RESOURCES } from '../../shared/auth/scope-catalog.js';

export interface DevOidcUser {
  login: string;
  password: string;
  email: string;
  name: string;
  role?: 'admin' | 'user';
  tenant?: string;
}

export interface DevOidcService {
  clientId: string;
  secret: string;
  role?: 'admin' | 'user';
  tenant?: string;
}

export interface DevOidcOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The API's base URL: the console client's redirect and the tokens' audience derive from it. */
  apiUrl: string;
  /** The access tokens' audience; default `<apiUrl>/api/v1`. */
  audience?: string;
  users?: DevOidcUser[];
  services?: DevOidcService[];
  /** Private JWKs (RS256 or ES256), the first signs; default: one RSA key made now. */
  keys?: Record<string, unknown>[];
}

export interface DevOidc {
  issuer: string;
  audience: string;
  /** This provider as an entry of AUTH_OIDC_ISSUERS. */
  issuerConfig: Record<string, unknown>;
  users: DevOidcUser[];
  services: DevOidcService[];
  stop(): Promise<void>;
}

export const SAMPLE_USERS: DevOidcUser[] = [
  { login: 'alice', password: 'alice-password', email: 'alice@example.com', name: 'Alice Admin', role: 'admin' },
  { login: 'bob', password: 'bob-password', email: 'bob@example.com', name: 'Bob User', role: 'user' },
];
export const SAMPLE_SERVICES: DevOidcService[] = [{ clientId: 'dev-service', secret: 'dev-service-secret', role: 'user' }];
const CONSOLE_CLIENT = { id: 'console', secret: 'console-secret' };

function newSigningKey(): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: `dev-${randomBytes(4).toString('hex')}`, alg: 'RS256', use: 'sig' };
}

/** Every scope of this API's grammar the provider may put into an access token. */
async function apiScopes(): Promise<string> {
  const resources = [...(await loadRegistry()).keys(), ...SYSTEM_RESOURCES];
  return ['*', ...ACTIONS, ...resources.flatMap((r) => [...ACTIONS, '*'].map((a) => `${r}:${a}`))].join(' ');
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}label{display:block;margin-top:1rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}button{margin-top:1.5rem;padding:.6rem 1rem;font-size:1rem;background:#1d4ed8;color:#fff;border:0;border-radius:4px}.error{color:#9f1d1d}</style>
</head><body><main>${body}</main></body></html>`;
}

function loginPage(uid: string, error?: string): string {
  return page(
    'Sign in: development identity provider',
    `<h1>Development identity provider</h1><p>Sign in with one of its sample users.</p>
${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}/login" autocomplete="off">
<label for="login">Username</label><input id="login" name="login" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" required>
<button type="submit">Sign in</button></form>`,
  );
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 10_000) break;
  }
  return new URLSearchParams(text);
}

/**
 * The provider's own in-memory store: sessions and grants need not outlive `npm start`. A
 * subclass, because the store as given warns at every start that it is for development only,
 * which this provider is.
 */
class DevelopmentStore extends MemoryAdapter {}

export async function startDevOidc(options: DevOidcOptions): Promise<DevOidc> {
  const users = options.users ?? SAMPLE_USERS;
  const services = options.services ?? SAMPLE_SERVICES;
  const audience = options.audience ?? `${options.apiUrl}/api/v1`;
  // The console may be opened as 127.0.0.1 or as localhost.
  const apiOrigins = [...new Set([options.apiUrl, options.apiUrl.replace('//127.0.0.1:', '//localhost:')])];
  const scope = await apiScopes();
  const keys = options.keys ?? [newSigningKey()];
  // Access tokens are signed with the first key's algorithm (the provider picks the key by it).
  const signingAlg = String(keys[0].alg ?? 'RS256') as 'RS256';
  let provider: Provider | undefined;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String((error as Error).message));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const issuer = `http://${options.host}:${(server.address() as AddressInfo).port}`;

  /** The login page and its form; consent is granted without asking (a first-party console). */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, submitted: boolean): Promise<void> {
    const details = await provider!.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error('interaction mismatch');
    if (details.prompt.name === 'login') {
      if (!submitted) return html(res, loginPage(uid));
      const form = await formBody(req);
      const user = users.find((u) => u.login === form.get('login') && u.password === form.get('password'));
      if (!user) return html(res, loginPage(uid, 'Unknown username or wrong password.'), 401);
      await provider!.interactionFinished(req, res, { login: { accountId: user.login } }, { mergeWithLastSubmission: false });
      return;
    }
    const { session, params, grantId } = details;
    const grant = grantId ? await provider!.Grant.find(grantId) : new provider!.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant!.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant!.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant!.addResourceScope(indicator, scopes.join(' '));
    await provider!.interactionFinished(req, res, { consent: { grantId: await grant!.save() } }, { mergeWithLastSubmission: true });
  }

  function html(res: ServerResponse, body: string, status = 200): void {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', issuer).pathname;
    const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(path);
    if (match) return interaction(req, res, match[1], Boolean(match[2]) && req.method === 'POST');
    provider!.callback()(req, res);
  }

  const claimsOf = (who: { role?: string; tenant?: string }) => ({ role: who.role ?? 'user', ...(who.tenant ? { tenant: who.tenant } : {}) });
  const configuration: Configuration = {
    adapter: DevelopmentStore,
    clients: [
      {
        client_id: CONSOLE_CLIENT.id,
        client_secret: CONSOLE_CLIENT.secret,
        client_name: 'Entity Record API console',
        redirect_uris: apiOrigins.map((origin) => `${origin}/api/v1/auth/oidc/callback`),
        post_logout_redirect_uris: apiOrigins.map((origin) => `${origin}/dashboard`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
      ...services.map((s) => ({ client_id: s.clientId, client_secret: s.secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] })),
    ],
    jwks: { keys: keys as never },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'tenant', 'role'] },
    // The ID token carries the profile claims (the console reads them from it, not from userinfo).
    conformIdTokenClaims: false,
    findAccount: async (_ctx, sub) => {
      const user = users.find((u) => u.login === sub);
      if (!user) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: user.email, email_verified: true, name: user.name, ...claimsOf(user) }) };
    },
    extraTokenClaims: async (_ctx, token) => {
      const service = services.find((s) => s.clientId === (token as { clientId?: string }).clientId);
      if (token.kind === 'ClientCredentials' && service) return claimsOf(service);
      const user = users.find((u) => u.login === (token as { accountId?: string }).accountId);
      return user ? { email: user.email, name: user.name, ...claimsOf(user) } : undefined;
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== audience) throw new oidcErrors.InvalidTarget();
          return { scope, audience, accessTokenFormat: 'jwt', accessTokenTTL: 3600, jwt: { sign: { alg: signingAlg } } };
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
          ctx.body = page(
            'Sign out: development identity provider',
            `<h1>Sign out of the development identity provider?</h1>${form}<button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>`,
          );
        },
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
          ctx.body = page('Signed out', '<h1>You are signed out of the development identity provider.</h1>');
        },
      },
    },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = page('Sign-in error', `<h1>Something went wrong</h1><pre>${escape(JSON.stringify(out, null, 2))}</pre>`);
    },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, ClientCredentials: 3600, IdToken: 3600, Interaction: 600, Session: 86400, Grant: 86400 },
  };
  provider = new Provider(issuer, configuration);

  return {
    issuer,
    audience,
    issuerConfig: {
      issuer,
      audience,
      name: 'Development IdP',
      clientId: CONSOLE_CLIENT.id,
      clientSecret: CONSOLE_CLIENT.secret,
      defaultTenant: DEFAULT_TENANT_ID,
    },
    users,
    services,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * `DEV_OIDC=1 npm start`: the provider on 127.0.0.1:DEV_OIDC_PORT (3001; 0 picks a free port) for
 * the API at `apiUrl`, added to AUTH_OIDC_ISSUERS of this process (the handlers run in it).
 */
export async function startDevOidcForApi(apiUrl: string): Promise<DevOidc> {
  const port = Number(process.env.DEV_OIDC_PORT || 3001);
  const dev = await startDevOidc({ host: '127.0.0.1', port, apiUrl, ...devOidcConfigFromEnv() }).catch((error: NodeJS.ErrnoException) => {
    // A plain Error: main.ts would otherwise name PORT as the port in use.
    throw new Error(error.code === 'EADDRINUSE' ? `the development identity provider's port ${port} is in use: set DEV_OIDC_PORT to another (0 picks a free one)` : error.message);
  });
  const configured = process.env.AUTH_OIDC_ISSUERS ? (JSON.parse(process.env.AUTH_OIDC_ISSUERS) as { issuer?: string }[]) : [];
  process.env.AUTH_OIDC_ISSUERS = JSON.stringify([...configured.filter((i) => i.issuer !== dev.issuer), dev.issuerConfig]);
  resetConfig();
  return dev;
}

/** DEV_OIDC_CONFIG: the samples to use instead of the built-in ones. */
export function devOidcConfigFromEnv(): Pick<DevOidcOptions, 'users' | 'services' | 'keys'> {
  const raw = process.env.DEV_OIDC_CONFIG;
  if (!raw) return {};
  const parsed = JSON.parse(raw) as Pick<DevOidcOptions, 'users' | 'services' | 'keys'>;
  return { users: parsed.users, services: parsed.services, keys: parsed.keys };
}

/** How to use it: printed by `npm start`. */
export function describeDevOidc(dev: DevOidc): string {
  const service = dev.services[0];
  return [
    `  Development identity provider  ${dev.issuer}   (DEV_OIDC=1)`,
    `    Console: "Sign in with Development IdP" as ${dev.users.map((u) => `${u.login} / ${u.password} (${u.role ?? 'user'})`).join(', ')}`,
    ...(service
      ? [
          '    A token for the API (client credentials), then a call with it:',
          `      TOKEN=$(curl -s -u ${service.clientId}:${service.secret} -d grant_type=client_credentials -d 'scope=tasks:read tasks:write' ${dev.issuer}/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
          `      curl -H "Authorization: Bearer $TOKEN" ${dev.audience}/tasks`,
        ]
      : []),
    '',
  ].join('\n');
}

// Run on its own (the tests' provider process): DEV_OIDC_HOST, DEV_OIDC_PORT, DEV_OIDC_API_URL, DEV_OIDC_AUDIENCE, DEV_OIDC_CONFIG.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dev = await startDevOidc({
    host: process.env.DEV_OIDC_HOST || '127.0.0.1',
    port: Number(process.env.DEV_OIDC_PORT ?? 0),
    apiUrl: process.env.DEV_OIDC_API_URL ?? 'http://127.0.0.1:3000',
    audience: process.env.DEV_OIDC_AUDIENCE || undefined,
    ...devOidcConfigFromEnv(),
  });
  console.log(`OpenID Provider listening on ${dev.issuer}`);
  const stop = () => void dev.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

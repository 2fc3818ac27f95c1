/**
 * A real OpenID Provider process on 127.0.0.1 for the identity provider tests: the development
 * provider of infra/local/dev-oidc.ts (oidc-provider) run on its own, with the test's own
 * signing keys (so that a test can also forge what a provider never issued), service clients and
 * users. `restart` brings it back on the same port, e.g. with new keys.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { DevOidcService, DevOidcUser } from '../../../infra/local/dev-oidc.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export interface ProviderConfig {
  audience: string;
  apiUrl?: string;
  users?: DevOidcUser[];
  services: DevOidcService[];
  keys: JWK[];
}

export interface ProviderProcess {
  issuer: string;
  /** Stops it and starts it again on the same port with `keys` (the first signs). */
  restart(keys: JWK[]): Promise<void>;
  stop(): Promise<void>;
}

/** A signing key pair as JWKs (private for the provider, public for forging checks). */
export async function signingKey(kid: string, alg: 'RS256' | 'ES256' = 'RS256'): Promise<{ privateJwk: JWK; publicJwk: JWK; privateKey: CryptoKey }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return {
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
    privateKey: privateKey as CryptoKey,
  };
}

function launch(config: ProviderConfig, port: number): Promise<{ child: ChildProcess; issuer: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/dev-oidc.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DEV_OIDC_PORT: String(port),
      DEV_OIDC_API_URL: config.apiUrl ?? 'http://127.0.0.1:1',
      DEV_OIDC_AUDIENCE: config.audience,
      DEV_OIDC_CONFIG: JSON.stringify({ users: config.users ?? [], services: config.services, keys: config.keys }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OpenID Provider did not start in 30 s:\n${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, issuer: match[1] });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the OpenID Provider exited with ${code}:\n${output}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export async function startProvider(config: ProviderConfig): Promise<ProviderProcess> {
  let { child, issuer } = await launch(config, 0);
  const port = Number(new URL(issuer).port);
  return {
    issuer,
    async restart(keys) {
      await stopChild(child);
      ({ child } = await launch({ ...config, keys }, port));
    },
    stop: () => stopChild(child),
  };
}

/** An access token for the API from the provider's token endpoint (client credentials). */
export async function clientCredentialsToken(issuer: string, service: DevOidcService, scope?: string): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${service.clientId}:${service.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || !body.access_token) throw new Error(`token request of ${service.clientId} failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/**
 * `npm start`: the API on http://HOST:PORT backed by DynamoDB Local persisted in DATA_DIR.
 * Stops cleanly on SIGINT/SIGTERM; a missing Java or a taken port ends with one line. The engine,
 * the S3 server and the webhook workers are restarted when they stop (supervisor.ts); one that
 * keeps failing ends the run with a message saying what to do.
 */
import { LocalRuntimeError } from './dynamodb-local.js';
import { startLocalStack } from './server.js';
import { describeSeed } from './seed.js';
import { readPendingPassword } from './admin-password.js';
import type { DevOidc } from './dev-oidc.js';
import { configuredIssuers } from '../../shared/auth/oidc-config.js';

// Lambda runs Node 22; locally on Node 20 the SDK's notice about its future minimum is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// Read before start-up sets DYNAMODB_ENDPOINT to the engine it starts.
const EXTERNAL_ENGINE = Boolean(process.env.DYNAMODB_ENDPOINT || process.env.AWS_ENDPOINT_URL_DYNAMODB);

async function main(): Promise<void> {
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT ?? 3000);
  let stopping = false;
  // A part that keeps failing (supervisor.ts) ends the run with what to do, and exit code 1.
  const giveUp = (message: string) => {
    if (stopping) return;
    stopping = true;
    console.error(message);
    const stopped = stack ? stack.stop() : Promise.resolve();
    stopped.finally(() => process.exit(1));
  };
  let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
  stack = await startLocalStack({
    onGiveUp: giveUp,
    host,
    port,
    dataDir: process.env.DATA_DIR || '.data',
    dynamoEndpoint: process.env.DYNAMODB_ENDPOINT || process.env.AWS_ENDPOINT_URL_DYNAMODB || undefined,
    admin: { email: process.env.ADMIN_EMAIL, password: process.env.ADMIN_PASSWORD },
    seed: process.env.SEED || undefined,
  });
  // DEV_OIDC=1: a development OpenID Provider beside the API (infra/local/dev-oidc.ts), loaded
  // only then: oidc-provider and its dependencies took as long to load as the rest of the start.
  let devOidc: DevOidc | undefined;
  let describeDevOidc: ((oidc: DevOidc) => string) | undefined;
  try {
    if (process.env.DEV_OIDC === '1') {
      const module = await import('./dev-oidc.js');
      describeDevOidc = module.describeDevOidc;
      devOidc = await module.startDevOidcForApi(stack.url);
    }
    // A mistake in AUTH_OIDC_ISSUERS stops the start here, not the first sign-in.
    configuredIssuers();
  } catch (error) {
    await stack.stop();
    throw error;
  }
  console.log(`Entity Record API listening on ${stack.url} (DynamoDB at ${stack.dynamoEndpoint})`);
  console.log(welcome(stack.url, stack.admin));
  if (devOidc && describeDevOidc) console.log(describeDevOidc(devOidc));
  if (stack.seeded) console.log('skipped' in stack.seeded ? stack.seeded.skipped : `${describeSeed(stack.seeded, stack.url)}\n`);
  const started = stack;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    Promise.all([started.stop(), devOidc?.stop()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** Where to go and how to get in: the first thing a newcomer reads. */
function welcome(url: string, admin: { email: string; password?: string; passwordFile?: string }): string {
  const password = admin.password ?? '<your password>';
  const lines = [
    '',
    `  API        ${url}/api/v1   (lists the entities you may use)`,
    `  Reference  ${url}/api/docs`,
    `  Dashboard  ${url}/dashboard`,
    `  Health     ${url}/api/health`,
    '',
    `  Admin      ${admin.email}`,
    admin.password
      ? `  Password   ${admin.password}   (generated; shown at every start until you first sign in${admin.passwordFile ? `, kept in ${admin.passwordFile} until then` : ''})`
      : process.env.ADMIN_PASSWORD
        ? '  Password   the one in ADMIN_PASSWORD'
        : '  Password   not shown: a generated password is shown only until the admin first signs in (ADMIN_PASSWORD sets one of your own)',
    '',
    '  Sign in (the session cookie goes to cookies.txt):',
    `    curl -c cookies.txt -H 'Content-Type: application/json' \\`,
    `      -d '{"email":"${admin.email}","password":"${password}"}' ${url}/api/v1/auth/login`,
    `  Lost the password?  npm run admin -- reset-password ${admin.email}`,
    '',
  ];
  return lines.join('\n');
}

main().catch((error: unknown) => {
  const e = error as NodeJS.ErrnoException;
  if (error instanceof LocalRuntimeError) console.error(error.message);
  else if (e.code === 'EADDRINUSE') {
    if (!EXTERNAL_ENGINE && readPendingPassword(process.env.DATA_DIR || '.data')) console.error('The admin\'s generated password is kept: the next start that serves shows it.');
    console.error(`Port ${process.env.PORT ?? 3000} is already in use: stop what uses it or set PORT to another port.`);
  } else if (e.code === 'EACCES') console.error(`Not allowed to listen on port ${process.env.PORT ?? 3000}: set PORT to a port above 1024.`);
  else console.error(`Could not start: ${e.message}`);
  process.exit(1);
});

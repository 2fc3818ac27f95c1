/**
 * `npm run admin -- <command>`: the operator's chores from a terminal. Users, tenants, keys and
 * passwords go to the tables through the domain code (bin/admin/chores.ts), locally or on AWS
 * (bin/admin/database.ts); import and export go through the API (bin/admin/transfer.ts).
 * Results go to stdout, progress and messages to stderr. `--help` on every command.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_ADMIN_EMAIL } from '../shared/auth/bootstrap.js';
import { ApiError } from '../shared/errors.js';
import { apiTarget } from './admin/api-client.js';
import { ChoreError, DEFAULT_TENANT_ID, createApiKey, createTenant, createTenantUser, describeError, listApiKeys, listUsers, resetPassword, revokeApiKey, setRole } from './admin/chores.js';
import { openDatabase } from './admin/database.js';
import { clearPendingPassword, readPendingPassword } from '../infra/local/admin-password.js';
import { exportEntity, importFile, type Format } from './admin/transfer.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The domain code logs JSON lines at INFO; a terminal tool says what it did itself.
process.env.LOG_LEVEL ??= 'WARN';

/** Runs a chore with the database open, closing it however the chore ends. */
async function withDatabase<T>(chore: () => Promise<T>): Promise<T> {
  const database = await openDatabase();
  try {
    return await chore();
  } finally {
    await database.close();
  }
}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '(none)';
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => String(r[c] ?? ''))))].join('\n');
}

const role = (value: string) => {
  if (value !== 'admin' && value !== 'user') throw new InvalidArgumentError('must be admin or user');
  return value;
};

const program = new Command('npm run admin --')
  .description('Operator chores for the Entity Record API: tenants, users, keys, passwords, import and export.\nLocally they use DATA_DIR (the running npm start\'s database); ADMIN_TARGET=aws uses a deployment (see docs/operating.md).')
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: false });

const tenants = program.command('tenants').description('tenants (organisations)');
tenants
  .command('create')
  .description('create a tenant with its first admin (prints a generated password unless --admin-password)')
  .argument('<name>', 'the tenant\'s name')
  .requiredOption('--admin-email <email>', 'e-mail of its first admin')
  .option('--admin-name <name>', 'name of its first admin', 'Administrator')
  .option('--admin-password <password>', 'password of its first admin (8 to 1024 characters)')
  .action(async (name: string, o: { adminEmail: string; adminName: string; adminPassword?: string }) => {
    const created = await withDatabase(() => createTenant(name, { email: o.adminEmail, name: o.adminName, password: o.adminPassword }));
    console.log(`tenant ${created.tenant.id} "${created.tenant.name}", admin ${created.admin.email}${created.password ? ` with password ${created.password} (shown once)` : ''}`);
  });

const users = program.command('users').description('users of a tenant');
users
  .command('create')
  .description('create a user (prints a generated password unless --password)')
  .argument('<email>', 'the user\'s e-mail')
  .option('--name <name>', 'display name (default: the part of the e-mail before @)')
  .option('--role <role>', 'admin or user', role, 'user')
  .option('--tenant <tenantId>', 'the tenant (default: the operator\'s, ten_default)', DEFAULT_TENANT_ID)
  .option('--password <password>', 'the password (8 to 1024 characters)')
  .action(async (email: string, o: { name?: string; role: 'admin' | 'user'; tenant: string; password?: string }) => {
    const created = await withDatabase(() => createTenantUser({ email, name: o.name ?? email.split('@')[0], role: o.role, tenantId: o.tenant, password: o.password }));
    console.log(`user ${created.user.id} ${created.user.email} (${created.user.role}) in ${created.user.tenantId}${created.password ? ` with password ${created.password} (shown once)` : ''}`);
  });
users
  .command('list')
  .description('list the users of a tenant')
  .option('--tenant <tenantId>', 'the tenant', DEFAULT_TENANT_ID)
  .option('--json', 'print JSON instead of a table')
  .action(async (o: { tenant: string; json?: boolean }) => {
    const list = await withDatabase(() => listUsers(o.tenant));
    console.log(o.json ? JSON.stringify(list, null, 2) : table(list, ['id', 'email', 'name', 'role', 'createdAt']));
  });
users
  .command('role')
  .description('make a user an admin or a user of their tenant')
  .argument('<email>', 'the user\'s e-mail')
  .argument('<role>', 'admin or user', role)
  .action(async (email: string, newRole: 'admin' | 'user') => {
    const changed = await withDatabase(() => setRole(email, newRole));
    console.log(`${changed.email} is now ${changed.role}`);
  });

const keys = program.command('keys').description('API keys (the /api/v1/api-keys family: scopes like tasks:read)');
keys
  .command('create')
  .description('create an API key for a user; the key is printed once')
  .argument('<email>', 'the key\'s owner')
  .requiredOption('--scopes <list>', 'comma-separated scopes: <entity>:<read|write|delete|*>, read, write, delete, or * (admins)')
  .option('--name <name>', 'a name to recognise it by', 'admin CLI')
  .option('--expires <datetime>', 'ISO 8601 expiry, e.g. 2027-01-01T00:00:00Z')
  .addOption(new Option('--environment <env>', 'sk_live_ or sk_test_ key').choices(['live', 'test']))
  .action(async (email: string, o: { scopes: string; name: string; expires?: string; environment?: string }) => {
    const created = await withDatabase(() =>
      createApiKey(email, { name: o.name, scopes: o.scopes.split(',').map((s) => s.trim()).filter(Boolean), expiresAt: o.expires, environment: o.environment }),
    );
    console.log(created.key);
    console.error(`key ${created.record.id} "${created.record.name}" for ${email}, scopes ${created.record.scopes.join(',')}: store it now, it is shown only once`);
  });
keys
  .command('list')
  .description('list a user\'s keys (never the keys themselves)')
  .argument('<email>', 'the keys\' owner')
  .option('--json', 'print JSON instead of a table')
  .action(async (email: string, o: { json?: boolean }) => {
    const list = await withDatabase(() => listApiKeys(email));
    const rows = list.map((k) => ({ ...k, scopes: k.scopes.join(',') }));
    console.log(o.json ? JSON.stringify(list, null, 2) : table(rows, ['id', 'keyPrefix', 'name', 'scopes', 'status', 'expiresAt', 'lastUsedAt']));
  });
keys
  .command('revoke')
  .description('revoke a key by its id (key_…)')
  .argument('<keyId>', 'the key\'s id, from keys list')
  .action(async (keyId: string) => {
    const revoked = await withDatabase(() => revokeApiKey(keyId));
    console.log(`revoked ${revoked.id} at ${revoked.revokedAt}`);
    console.error('A running API that verified this key lately may accept it until its cache expires (API_KEY_CACHE_SECONDS, 300 s by default).');
  });

program
  .command('reset-password')
  .description('set a new password for any user (printed, unless --password) and end their sessions')
  .argument('<email>', 'the user\'s e-mail')
  .option('--password <password>', 'the new password (8 to 1024 characters)')
  .action(async (email: string, o: { password?: string }) => {
    const done = await withDatabase(async () => {
      const result = await resetPassword(email, o.password);
      // A generated bootstrap password still waiting in DATA_DIR no longer opens the account.
      const dir = process.env.ADMIN_TARGET === 'aws' ? undefined : process.env.DATA_DIR || '.data';
      if (dir && readPendingPassword(dir)?.email === result.email) clearPendingPassword(dir);
      return result;
    });
    console.log(done.password ? `${done.email}: new password ${done.password}` : `${done.email}: password set`);
    console.error(`${done.sessionsEnded} session(s) ended`);
  });

const asOptions = (command: Command) =>
  command
    .option('--as <email>', 'run as this user (their tenant, their rights); default ADMIN_EMAIL or admin@localhost')
    .option('--key <apiKey>', 'use this API key instead (or API_KEY)')
    .option('--url <url>', 'the API (or API_URL; default http://127.0.0.1:$PORT)');

asOptions(
  program
    .command('import')
    .description('import a file of records through the API, 100 rows a request, resumable: re-running it after a crash imports nothing twice')
    .argument('<entity>', 'the entity, e.g. tasks')
    .argument('<file>', 'file.csv (header row = field names), file.ndjson (one object a line) or file.json (an array)')
    .addOption(new Option('--format <format>', 'when the file name does not say').choices(['csv', 'ndjson', 'json']))
    .option('--errors <file>', 'where to write the rows refused (NDJSON: row, error, details, item)', '<file>.errors.ndjson')
    .option('--notify', 'tasks only: emit task.created events (webhooks, streams) for imported tasks')
    .option('--assign-users', 'tasks only: turn assigneeEmail into the assignee')
    .option('--concurrency <n>', 'batches of 100 in flight at once', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 16) throw new InvalidArgumentError('must be 1 to 16');
      return n;
    }, 1),
).action(async (entity: string, file: string, o: { format?: string; errors: string; notify?: boolean; assignUsers?: boolean; concurrency: number; as?: string; key?: string; url?: string }) => {
  const target = await apiTarget(o);
  const summary = await importFile(target, entity, file, { format: o.format, errors: o.errors === '<file>.errors.ndjson' ? undefined : o.errors, notify: o.notify, assignUsers: o.assignUsers, concurrency: o.concurrency });
  const rate = Math.round(summary.rows / Math.max(summary.seconds, 0.001));
  console.log(
    `imported ${summary.imported} of ${summary.rows} rows into ${entity} in ${summary.seconds.toFixed(1)} s (${rate} rows/s)` +
      `${summary.alreadyImported ? `, ${summary.alreadyImported} of them by an earlier run` : ''}; ${summary.failed} failed` +
      `${summary.errorsFile ? `: see ${summary.errorsFile}` : ''}`,
  );
  if (summary.failed) process.exitCode = 2;
});

asOptions(
  program
    .command('export')
    .description('export the records you can see to stdout (or --output): CSV that imports back, NDJSON or JSON')
    .argument('<entity>', 'the entity, e.g. tasks')
    .option('--filter <json>', 'a filter of the query language, e.g. \'{"status":"todo"}\'')
    .option('--sort <fields>', 'e.g. -createdAt or priority,title')
    .option('--fields <list>', 'comma-separated fields (id always)')
    .addOption(new Option('--format <format>', 'output format').choices(['csv', 'ndjson', 'json']).default('csv'))
    .option('-o, --output <file>', 'write to this file instead of stdout'),
).action(async (entity: string, o: { filter?: string; sort?: string; fields?: string; format: Format; output?: string; as?: string; key?: string; url?: string }) => {
  const target = await apiTarget(o);
  const out = o.output ? createWriteStream(o.output) : process.stdout;
  const result = await exportEntity(target, entity, { filter: o.filter, sort: o.sort, fields: o.fields, format: o.format }, out);
  if (o.output) {
    (out as NodeJS.WritableStream).end();
    await once(out, 'close');
  }
  console.error(`exported ${result.rows} ${entity} in ${result.seconds.toFixed(1)} s${o.output ? ` to ${o.output}` : ''}`);
});

program.addHelpText('after', `
Examples:
  npm run admin -- users create ada@example.com --name Ada
  npm run admin -- keys create ada@example.com --scopes tasks:read,tasks:write
  npm run admin -- reset-password ${DEFAULT_ADMIN_EMAIL}
  npm run admin -- import tasks tasks.csv
  npm run -s admin -- export tasks --filter '{"status":"todo"}' > todo.csv   (-s: npm prints nothing of its own)`);

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof ChoreError || error instanceof ApiError) console.error(describeError(error));
  else console.error(`admin: ${(error as Error).message}`);
  process.exit(1);
});

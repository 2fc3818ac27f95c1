/**
 * The bootstrap admin on AWS: the onEvent handler of the CloudFormation custom resource
 * `Custom::BootstrapAdmin` (infra/aws/bootstrap.ts), what `npm start` does locally.
 *
 * - Create, Update: reads the admin password from Secrets Manager (property AdminPasswordSecretArn;
 *   the secret string itself, or a JSON object's `password` field) and calls
 *   `ensureBootstrapAdmin({email: AdminEmail, password})`: the default tenant, the admin and the
 *   platform operator role (shared/auth/bootstrap.ts). Idempotent.
 * - Delete: nothing. The admin stays in the (retained) identity table.
 *
 * Deploy-time code must not roll a stack back by accident:
 * - idempotent: every Create or Update converges on the same state (ensureBootstrapAdmin), so a
 *   repeated event (CloudFormation's or the provider framework's retry, a rollback's Update with
 *   the old properties) does no harm; Delete touches nothing;
 * - transient failures (throttling, a 5xx, a network error, a transaction conflict) are retried
 *   with back-off, up to TRANSIENT_ATTEMPTS, well inside the function's timeout;
 * - a real failure (no access, no such secret, a password too short, an e-mail of another tenant)
 *   throws at once with its reason, so the provider framework reports FAILED to CloudFormation
 *   with that reason and the deployment rolls back.
 * The password is never logged, returned or part of an error message.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { DEFAULT_ADMIN_EMAIL, ensureBootstrapAdmin } from '../../shared/auth/bootstrap.js';
import { MIN_PASSWORD_LENGTH } from '../../shared/auth/passwords.js';
import { config } from '../../shared/config.js';
import { normalizeEmail } from '../../shared/data/identity.js';
import { isUnavailableError } from '../../shared/errors.js';
import { loadLogger, logger } from '../../shared/logger.js';

/** The one physical id of the resource: the admin is a singleton of the deployment. */
export const PHYSICAL_RESOURCE_ID = 'bootstrap-admin';

export interface BootstrapAdminProperties {
  AdminEmail?: string;
  AdminPasswordSecretArn?: string;
  /** Not read: a hash of the secret reference (and adminPasswordVersion) so that a change reruns Update. */
  AdminPasswordRevision?: string;
}

export interface BootstrapAdminResponse {
  PhysicalResourceId: string;
  Data?: { AdminEmail: string };
}

let secretsClient: SecretsManagerClient | undefined;

function secrets(): SecretsManagerClient {
  secretsClient ??= new SecretsManagerClient({ region: config().region, maxAttempts: 3 });
  return secretsClient;
}

/** The password in the secret: its string, or the `password` field of a JSON object string. */
export async function readAdminPassword(secretArn: string): Promise<string> {
  const { SecretString } = await secrets().send(new GetSecretValueCommand({ SecretId: secretArn }));
  if (SecretString === undefined) throw new Error('the admin password secret has no SecretString (binary secrets are not supported)');
  let password = SecretString;
  if (SecretString.trimStart().startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(SecretString);
    } catch {
      parsed = undefined; // Not JSON after all: a password starting with '{'.
    }
    if (parsed !== undefined) {
      const field = (parsed as { password?: unknown } | null)?.password;
      if (typeof field !== 'string') throw new Error("the admin password secret is a JSON object without a string field 'password'");
      password = field;
    }
  }
  if (password.length < MIN_PASSWORD_LENGTH) throw new Error(`the admin password in the secret is shorter than ${MIN_PASSWORD_LENGTH} characters`);
  return password;
}

/** The error's message with every occurrence of the password replaced. */
export function redact(message: string, password: string | undefined): string {
  return password ? message.split(password).join('[REDACTED]') : message;
}

/** Attempts of a step whose failures are transient: about 1 + 2 + 4 + 8 s of waiting in all, far below the 2-minute timeout. */
export const TRANSIENT_ATTEMPTS = 5;
const FIRST_WAIT_MS = 1_000;

/** A failure that a later attempt may not meet: throttling, a server error, a network error, a conflicting transaction. */
export function isTransient(error: unknown): boolean {
  if (isUnavailableError(error)) return true;
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; CancellationReasons?: { Code?: string }[] } | undefined;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'TransactionConflictException' || e.name === 'LimitExceededException' || e.name === 'InternalServiceError') return true;
  if (e.code === 'EAI_AGAIN') return true;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  // A transaction cancelled only by conflicts or throttling (not by a failed condition).
  const reasons = (e.CancellationReasons ?? []).map((r) => r.Code).filter((code) => code && code !== 'None');
  return e.name === 'TransactionCanceledException' && reasons.length > 0 && reasons.every((code) => code === 'TransactionConflict' || code === 'ThrottlingError');
}

/** Runs `step`, again after a back-off while it fails transiently; the last error is thrown with the attempts made. */
export async function withRetries<T>(step: () => Promise<T>, sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isTransient(error)) throw error;
      if (attempt >= TRANSIENT_ATTEMPTS) throw Object.assign(error as Error, { attempts: attempt });
      logger.warn('bootstrap admin: transient failure, retrying', { attempt, error: (error as Error).name });
      await sleep(FIRST_WAIT_MS * 2 ** (attempt - 1));
    }
  }
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? (error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message) : String(error);
  const attempts = (error as { attempts?: number } | undefined)?.attempts;
  return attempts ? `${text} (transient, still failing after ${attempts} attempts)` : text;
}

export async function handler(event: CloudFormationCustomResourceEvent<BootstrapAdminProperties>): Promise<BootstrapAdminResponse> {
  // The logger loads on first use; loaded first, every line of the invocation is written before it returns.
  await loadLogger();
  if (event.RequestType === 'Delete') {
    logger.info('bootstrap admin: delete, nothing to do (the admin stays)', { physicalResourceId: event.PhysicalResourceId });
    return { PhysicalResourceId: event.PhysicalResourceId };
  }

  const properties = event.ResourceProperties;
  const email = normalizeEmail(properties.AdminEmail || DEFAULT_ADMIN_EMAIL);
  const secretArn = properties.AdminPasswordSecretArn;
  if (!secretArn) throw new Error('Bootstrap admin: property AdminPasswordSecretArn is missing');

  let password: string | undefined;
  try {
    password = await withRetries(() => readAdminPassword(secretArn));
    const admin = { email, password };
    await withRetries(() => ensureBootstrapAdmin(admin));
  } catch (error) {
    // The provider framework puts the message into CloudFormation's status reason and its logs.
    const message = `Bootstrap admin ${email} failed: ${redact(messageOf(error), password)}`;
    logger.error(message, { requestType: event.RequestType, secretArn });
    throw new Error(message);
  }

  logger.info('bootstrap admin ensured', { requestType: event.RequestType, email, secretArn });
  return {
    PhysicalResourceId: event.RequestType === 'Update' ? event.PhysicalResourceId : PHYSICAL_RESOURCE_ID,
    Data: { AdminEmail: email },
  };
}

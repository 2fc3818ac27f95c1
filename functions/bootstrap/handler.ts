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
 * A failure throws, so the CDK provider framework reports FAILED to CloudFormation and the
 * deployment rolls back. The password is never logged, returned or part of an error message.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { DEFAULT_ADMIN_EMAIL, ensureBootstrapAdmin } from '../../shared/auth/bootstrap.js';
import { MIN_PASSWORD_LENGTH } from '../../shared/auth/passwords.js';
import { config } from '../../shared/config.js';
import { normalizeEmail } from '../../shared/data/identity.js';
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

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message;
  return String(error);
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
    password = await readAdminPassword(secretArn);
    await ensureBootstrapAdmin({ email, password });
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

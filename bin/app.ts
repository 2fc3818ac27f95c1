/**
 * CDK app entry (cdk.json: `npx tsx bin/app.ts`). The stack is environment-agnostic: synth needs
 * no AWS credentials; `cdk deploy` takes account and region from the CLI's profile.
 *
 * Optional context (`-c key=value` or cdk.json):
 *   stackName       – default EntityRecordApi
 *   allowedOrigins  – comma-separated origins for CORS and the CSRF guard (ALLOWED_ORIGINS)
 *   environment     – more function environment, an object in cdk.json or a JSON string with -c,
 *                     e.g. {"RATE_LIMIT_API_KEY_PER_HOUR":"2000","SESSION_TTL_SECONDS":"3600"}
 *   families        – comma-separated families to deploy (default: every family of shared/routes.ts);
 *                     the routes of the others are left out of the API
 *   aiFastModelId   – Bedrock model id of text generation's `fast` model (default amazon.nova-micro-v1:0)
 *   aiQualityModelId – Bedrock model id of its `quality` model (default amazon.nova-pro-v1:0); both
 *                     must be available in the deployment region (or be an inference profile id)
 *
 * The bootstrap admin (the platform operator, infra/aws/bootstrap.ts), created or updated by a
 * custom resource at deploy time; the stack outputs AdminEmail and AdminPasswordSecretArn:
 *   adminEmail             – its e-mail, default admin@localhost
 *   adminPasswordSecretArn – an existing Secrets Manager secret with its password (the secret
 *                            string, or JSON with a "password" field); default: a secret CDK
 *                            generates (32 letters and digits). Read it with
 *                            aws secretsmanager get-secret-value --secret-id <arn> --query SecretString --output text
 *   adminPasswordVersion   – any text; change it to rerun the bootstrap after changing the
 *                            secret's value in place (put-secret-value, rotation)
 */
import { App } from 'aws-cdk-lib';
import { EntityRecordApiStack } from '../infra/aws/stack.js';
import { families } from '../shared/routes.js';

const app = new App();

function context(name: string): string | undefined {
  const value: unknown = app.node.tryGetContext(name);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function environmentContext(): Record<string, string> {
  let value: unknown = app.node.tryGetContext('environment');
  if (value === undefined || value === '') return {};
  if (typeof value === 'string') value = JSON.parse(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('context "environment" must be an object of strings');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

const environment: Record<string, string> = environmentContext();
const allowedOrigins = context('allowedOrigins');
if (allowedOrigins) environment.ALLOWED_ORIGINS = allowedOrigins;

const only = context('families')?.split(',').map((f) => f.trim()).filter(Boolean);
const unknown = only?.filter((f) => !(families as readonly string[]).includes(f)) ?? [];
if (unknown.length) throw new Error(`-c families: ${unknown.join(', ')} not in shared/routes.ts (known: ${families.join(', ')})`);

new EntityRecordApiStack(app, context('stackName') ?? 'EntityRecordApi', {
  description: 'Entity Record API: JSON records over HTTP (API Gateway, Lambda, DynamoDB)',
  environment,
  families: only,
  adminEmail: context('adminEmail'),
  adminPasswordSecretArn: context('adminPasswordSecretArn'),
  adminPasswordVersion: context('adminPasswordVersion'),
  aiModelIds: { fast: context('aiFastModelId'), quality: context('aiQualityModelId') },
});

app.synth();

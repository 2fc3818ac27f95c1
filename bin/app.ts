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
 *   throttleRate, throttleBurst – stage-wide API Gateway throttling (default 500 requests/s, burst 1000)
 *   accessLogs      – true: JSON access logs of the stage (request id, status, latency, ...); API
 *                     Gateway needs its CloudWatch role in the account and region:
 *   apiGatewayCloudWatchRole – true: create that role (only when the account has none)
 *   executionLogs   – ERROR or INFO: API Gateway execution logs of every method (never bodies),
 *                     kept a month; the same account role as access logs
 *   reservedConcurrency – reserved concurrency by family, an object in cdk.json or a JSON string
 *                     with -c, e.g. {"import":5,"graphql":20}; default none
 *
 * Alarms and dashboard (infra/aws/observability.ts; docs/deploying-on-aws.md, "Deploying with CDK", lists defaults):
 *   alarms, dashboard – false to leave them out (default true)
 *   alarmTopicArn   – an existing SNS topic the alarms notify; or
 *   alarmEmail      – an address: a topic is created with it subscribed (default: no topic)
 *   alarm5xxRatePercent, alarmLatencyP99Ms (a number, or {"default":3000,"import":10000}),
 *   alarmLambdaErrors, alarmLambdaThrottles, alarmDynamoThrottles – thresholds
 * WAF (infra/aws/waf.ts):
 *   waf             – true: a web ACL on the stage (default false)
 *   wafRateLimit    – requests per IP per 5 minutes before the rate rule blocks (default 2000)
 *   wafBodyLimit    – 413 for a declared body too large for Lambda (infra/aws/body-limit.ts);
 *                     default as waf; true with waf=false: a web ACL holding only these rules
 *   nag             – true: run cdk-nag's AwsSolutions checks on this configuration during synth
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
 *
 * Identity providers whose tokens the API accepts (infra/aws/identity-providers.ts; docs/deploying-on-aws.md,
 * "Signing in with your identity provider"):
 *   cognito             – true: a Cognito user pool and app client created with the stack
 *   cognitoDomainPrefix – its hosted sign-in domain's prefix (default <stack name>-<account>)
 *   cognitoMfa          – required (default) or optional: TOTP
 *   cognitoFeaturePlan  – essentials (default) or plus (threat protection, billed per active user)
 *   cognitoCallbackUrls – more console callback URLs (a custom domain's), comma-separated
 *   cognitoUserPoolId, cognitoClientId – an existing user pool and its app client
 *   oidcIssuers         – any OpenID Connect issuers, as AUTH_OIDC_ISSUERS entries (a JSON array)
 *
 * Retained data (docs/deploying-on-aws.md, "What survives"): deploy onto the tables and the
 * deployment secret an earlier stack of this app left behind, instead of new empty ones:
 *   existingTables      – table id → name, or {"name": ..., "streamArn": ...} for the events table,
 *                         an object in cdk.json or a JSON string with -c
 *   deploymentSecretArn – the complete ARN of the retained deployment secret
 */
import { App, Validations } from 'aws-cdk-lib';
import type { ExecutionLogLevel } from '../infra/aws/api.js';
import { observabilityOptionsFromContext } from '../infra/aws/observability.js';
import { identityProvidersFromContext } from '../infra/aws/identity-providers.js';
import { EntityRecordApiStack } from '../infra/aws/stack.js';
import { existingTablesFromContext } from '../infra/aws/tables.js';
import { wafOptionsFromContext } from '../infra/aws/waf.js';
import { families } from '../shared/routes.js';

const app = new App();

function context(name: string): string | undefined {
  const value: unknown = app.node.tryGetContext(name);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function flag(name: string): boolean {
  const value: unknown = app.node.tryGetContext(name);
  return value === true || value === 'true';
}

function positiveInteger(name: string): number | undefined {
  const value = context(name) ?? app.node.tryGetContext(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`context "${name}" must be a non-negative integer, got ${String(value)}`);
  return n;
}

function reservedConcurrencyContext(): Record<string, number> | undefined {
  let value: unknown = app.node.tryGetContext('reservedConcurrency');
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string') value = JSON.parse(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('context "reservedConcurrency" must be an object of family → number');
  const out: Record<string, number> = {};
  for (const [family, n] of Object.entries(value)) {
    if (!(families as readonly string[]).includes(family)) throw new Error(`context "reservedConcurrency": '${family}' is not a family of shared/routes.ts`);
    if (!Number.isInteger(n) || (n as number) < 0) throw new Error(`context "reservedConcurrency": '${family}' must be a non-negative integer`);
    out[family] = n as number;
  }
  return out;
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

function executionLogsContext(): ExecutionLogLevel | undefined {
  const value = context('executionLogs')?.toUpperCase();
  if (value === undefined || value === 'OFF' || value === 'FALSE') return undefined;
  if (value !== 'ERROR' && value !== 'INFO') throw new Error(`context "executionLogs" must be ERROR, INFO or OFF, got ${value}`);
  return value;
}

const throttleRate = positiveInteger('throttleRate');
const throttleBurst = positiveInteger('throttleBurst');

new EntityRecordApiStack(app, context('stackName') ?? 'EntityRecordApi', {
  description: 'Entity Record API: JSON records over HTTP (API Gateway, Lambda, DynamoDB)',
  environment,
  families: only,
  ...(throttleRate !== undefined || throttleBurst !== undefined ? { throttling: { rateLimit: throttleRate ?? 500, burstLimit: throttleBurst ?? 1000 } } : {}),
  accessLogs: flag('accessLogs'),
  executionLogs: executionLogsContext(),
  cloudWatchRole: flag('apiGatewayCloudWatchRole'),
  observability: observabilityOptionsFromContext((key) => app.node.tryGetContext(key), only ?? families),
  waf: wafOptionsFromContext((key) => app.node.tryGetContext(key)),
  reservedConcurrency: reservedConcurrencyContext(),
  adminEmail: context('adminEmail'),
  adminPasswordSecretArn: context('adminPasswordSecretArn'),
  adminPasswordVersion: context('adminPasswordVersion'),
  aiModelIds: { fast: context('aiFastModelId'), quality: context('aiQualityModelId') },
  existingTables: existingTablesFromContext(app.node.tryGetContext('existingTables')),
  deploymentSecretArn: context('deploymentSecretArn'),
  identityProviders: identityProvidersFromContext((key) => app.node.tryGetContext(key)),
});

// cdk-nag is a development dependency: loaded only when asked for.
if (flag('nag')) {
  const { AwsSolutionsChecks } = await import('cdk-nag');
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}

app.synth();

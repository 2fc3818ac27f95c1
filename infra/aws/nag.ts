/**
 * Every cdk-nag AwsSolutions finding this stack accepts, each on the constructs it concerns, with
 * the reason. Acknowledgements are CDK's own (`Validations.of(construct).acknowledge`): they cost
 * nothing at deploy time, and anyone who runs cdk-nag on the app sees only new findings
 * (test/infra/aws/nag.test.ts runs it and fails on any finding not acknowledged here).
 *
 * Findings are acknowledged one by one, by the id cdk-nag reports (a wildcard finding names its
 * action or resource), never by rule prefix alone.
 */
import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import type { BootstrapAdmin } from './bootstrap.js';
import type { FamilyFunctions } from './functions.js';
import type { IdentityProviders } from './identity-providers.js';
import type { Observability } from './observability.js';
import type { Tables } from './tables.js';
import type { Uploads } from './uploads.js';
import type { WebhookDelivery } from './webhooks.js';

/** The parts of the stack (infra/aws/stack.ts) whose findings are acknowledged here. */
export interface NaggedStack extends Stack {
  readonly tables: Tables;
  readonly functions: FamilyFunctions;
  readonly api: RestApi;
  readonly bootstrapAdmin: BootstrapAdmin;
  readonly deploymentSecret: secretsmanager.ISecret;
  readonly uploads: Uploads;
  readonly webhooks?: WebhookDelivery;
  readonly observability: Observability;
  readonly identityProviders?: IdentityProviders;
}

const BASIC_EXECUTION_ROLE = 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]';

function ack(construct: IConstruct, id: string, reason: string): void {
  Validations.of(construct).acknowledge({ id, reason });
}

function logicalId(construct: IConstruct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}

/** Called last in the stack's constructor, once every construct exists. */
export function acknowledgeNagFindings(stack: NaggedStack): void {
  const { api, webhooks } = stack;
  // The functions this app bundles: the families', webhook fan-out and delivery, the bootstrap admin's.
  const bundledFunctions: lambda.Function[] = [
    ...stack.functions.byFamily.values(),
    ...(webhooks ? [webhooks.fanoutFunction, webhooks.deliveryFunction] : []),
    stack.bootstrapAdmin.function,
  ];
  // Functions fed by a DynamoDB stream.
  const streamFunctions: lambda.Function[] = webhooks ? [webhooks.fanoutFunction] : [];
  const uploadFunction = stack.functions.byFamily.get('upload');

  // Secrets.
  ack(
    stack.deploymentSecret,
    'AwsSolutions-SMG4',
    'Root of the keys that sign pagination cursors and encrypt stored webhook secrets: rotating it would make every stored webhook secret undecryptable, and nothing re-encrypts them yet.',
  );
  if (stack.bootstrapAdmin.secret instanceof secretsmanager.Secret) {
    ack(
      stack.bootstrapAdmin.secret,
      'AwsSolutions-SMG4',
      "The admin's password is also hashed in the identity table; a rotation Lambda would have to update both. The operator changes it with put-secret-value and a new adminPasswordVersion (docs/deploying-on-aws.md: The bootstrap admin at deploy time).",
    );
  }

  // Every Lambda function's role: CloudWatch Logs through AWS's basic execution policy.
  for (const fn of stack.node.findAll().filter((c): c is lambda.Function => c instanceof lambda.Function)) {
    if (fn.role) {
      ack(fn.role, BASIC_EXECUTION_ROLE, 'AWSLambdaBasicExecutionRole grants only logs:CreateLogGroup, CreateLogStream and PutLogEvents, which every function needs to log.');
    }
  }
  const xray = 'X-Ray tracing: xray:PutTraceSegments and PutTelemetryRecords support no resource-level permissions';
  const checked = '(test/infra/aws/nag.test.ts checks that no other action is granted on *)';
  for (const fn of bundledFunctions) {
    ack(
      fn,
      'AwsSolutions-IAM5[Resource::*]',
      streamFunctions.includes(fn)
        ? `${xray}, nor does dynamodb:ListStreams, which the stream event source needs ${checked}.`
        : `${xray} ${checked}.`,
    );
    for (const table of Object.values(stack.tables)) {
      if (!table) continue;
      // A table the stack created is named by its logical id; a retained one (existingTables) by its name.
      const arn = table.node.defaultChild ? `<${logicalId(table)}.Arn>` : `arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/${table.tableName}`;
      ack(
        fn,
        `AwsSolutions-IAM5[Resource::${arn}/index/*]`,
        "Queries on the table's own secondary indexes; the wildcard covers the indexes of that one table only.",
      );
    }
  }

  // The fan-out's failure destination is itself the end of the line, like a dead-letter queue.
  if (stack.webhooks) {
    ack(
      stack.webhooks.fanoutFailureQueue,
      'AwsSolutions-SQS3',
      "The stream event source mapping's on-failure destination: it holds what the fan-out gave up on, raises an alarm at its first message and is emptied by `npm run events:redrive`; a queue behind it would only move the same messages.",
    );
  }

  // The upload function: CDK's bucket grants, on the uploads bucket only.
  if (uploadFunction) {
    const bucket = logicalId(stack.uploads.bucket);
    const reason = "The upload function reads, writes and deletes uploaded objects (bucket.grantPut/grantRead/grantDelete); every wildcard is limited to the uploads bucket and its objects.";
    for (const finding of ['Action::s3:Abort*', 'Action::s3:DeleteObject*', 'Action::s3:GetBucket*', 'Action::s3:GetObject*', 'Action::s3:List*', `Resource::<${bucket}.Arn>/*`]) {
      ack(uploadFunction, `AwsSolutions-IAM5[${finding}]`, reason);
    }
  }
  ack(
    stack.uploads.bucket,
    'AwsSolutions-S1',
    'Every object operation goes through the upload function, which issues the presigned POST policies and checks each object, and logs both; S3 server access logs would need a second bucket and are left to account-wide logging (CloudTrail data events).',
  );

  // The bootstrap admin's custom resource provider (CDK's framework).
  ack(
    stack.bootstrapAdmin,
    `AwsSolutions-IAM5[Resource::<${logicalId(stack.bootstrapAdmin.function)}.Arn>:*]`,
    "CDK's custom resource provider framework may invoke every version of the bootstrap function; the wildcard is that one function's qualifiers.",
  );

  // The API: the functions authenticate and validate.
  const noGatewayAuth =
    'Authentication is the API itself: sessions and API keys checked by every family function (scopes, tenancy and row-level security in the data layer); health, login and the docs are public by design. A gateway authorizer cannot express per-tenant keys and sessions.';
  ack(api, 'AwsSolutions-APIG4', noGatewayAuth);
  ack(api, 'AwsSolutions-COG4', noGatewayAuth);
  ack(
    api,
    'AwsSolutions-APIG2',
    "Each function validates its requests against the entity registry's JSON schemas and answers 400 in the error envelope; an API Gateway validator would answer in its own format and cannot follow the registry.",
  );
  const cloudWatchRole = api.node.tryFindChild('CloudWatchRole');
  if (cloudWatchRole) {
    ack(
      cloudWatchRole,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      "API Gateway's account-wide logging role, created only on request (apiGatewayCloudWatchRole); AWS's policy is the documented one for it.",
    );
  }

  // The Cognito user pool created with the stack (cognito=true).
  const pool = stack.identityProviders?.userPool;
  if (pool) {
    const resource = pool.node.defaultChild as cognito.CfnUserPool;
    if (resource.userPoolTier !== 'PLUS') {
      ack(
        pool,
        'AwsSolutions-COG8',
        "Cognito's threat protection is the Plus feature plan, billed per monthly active user: chosen with -c cognitoFeaturePlan=plus (docs/deploying-on-aws.md). The pool requires strong passwords and TOTP MFA, and has no self sign-up.",
      );
    }
    if (resource.mfaConfiguration !== 'ON') {
      ack(pool, 'AwsSolutions-COG2', 'MFA (TOTP) is optional because the operator asked for it (-c cognitoMfa=optional); the default requires it.');
    }
  }

  // The alarm topic created for an e-mail address.
  if (stack.observability.topic instanceof sns.Topic) {
    ack(
      stack.observability.topic,
      'AwsSolutions-SNS2',
      "Alarm notifications carry alarm names, states and metric values, no data; the AWS-managed SNS key does not let CloudWatch publish, and a customer key would cost more than what it protects. Publishing requires TLS (SNS3).",
    );
  }
}

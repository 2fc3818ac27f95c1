/**
 * Migrations at deploy time (docs/changing-entities.md): a CloudFormation custom resource whose
 * properties carry a hash of the entity definitions, so a deploy that changes one runs it; it runs
 * after the API's functions are updated, and starts the migration job:
 *
 *   Custom::EntityMigrations {DefinitionsHash, EntityFiles}
 *     → custom_resources.Provider → functions/migration-job/handler.ts
 *       (records the target layouts, then invokes itself asynchronously: the job)
 *     → the job: Scan segments in parallel, each position saved after every page; it continues
 *       itself (asynchronous self-invocation) until every migration is done.
 *
 * A self-continuing function rather than Step Functions: the work is one loop over Scan pages whose
 * state (the segments' positions) is already kept in the database, the same runner `npm start`
 * uses; a state machine would add a second place for that state, a service and its permissions,
 * for no step the loop cannot do. The function may read and write the records table, and invoke
 * itself; nothing else.
 */
import { CustomResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct, type IConstruct } from 'constructs';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { entitiesDirectory, entityFileNames } from '../../shared/registry/index.js';
import { BASE_ENVIRONMENT, createBundledFunction, handlerEntry, registryEnvironment } from './functions.js';
import { tableEnvName } from './tables.js';

export const MIGRATION_RESOURCE_TYPE = 'Custom::EntityMigrations';

export interface EntityMigrationsProps {
  recordsTable: dynamodb.ITable;
  /** What must be updated before the migration starts: the API's functions. */
  after?: readonly IConstruct[];
  /** Seconds between recording the targets and the first Scan (every function then writes with them). */
  settleSeconds?: number;
  /** For tests only: code instead of bundling functions/migration-job/handler.ts. */
  code?: lambda.Code;
}

/** A hash of every definition file: a deploy that changes one reruns the custom resource. */
export function definitionsHash(): string {
  const dir = entitiesDirectory();
  const hash = createHash('sha256');
  for (const name of entityFileNames(dir)) hash.update(name).update('\0').update(readFileSync(path.join(dir!, `${name}.ts`))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

export class EntityMigrations extends Construct {
  readonly function: NodejsFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: EntityMigrationsProps) {
    super(scope, id);
    this.function = createBundledFunction(this, 'Function', {
      description: 'Entity Record API: entity layout migrations (custom resource and self-continuing job)',
      entry: handlerEntry('migration-job'),
      code: props.code,
      // Each invocation works until a minute before this, then continues itself.
      timeout: Duration.minutes(15),
      memorySize: 1024,
      environment: {
        ...BASE_ENVIRONMENT,
        ...registryEnvironment(),
        [tableEnvName('records')]: props.recordsTable.tableName,
        MIGRATION_SETTLE_SECONDS: String(props.settleSeconds ?? 30),
      },
    });
    props.recordsTable.grantReadWriteData(this.function);
    // A policy of its own (not the role's default one, which the function depends on): no cycle.
    new iam.Policy(this, 'SelfInvoke', {
      roles: [this.function.role!],
      statements: [new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.function.functionArn] })],
    });

    const provider = new cr.Provider(this, 'Provider', {
      onEventHandler: this.function,
      logGroup: new logs.LogGroup(this, 'ProviderLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
    });
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: provider.serviceToken,
      resourceType: MIGRATION_RESOURCE_TYPE,
      properties: { DefinitionsHash: definitionsHash(), EntityFiles: entityFileNames().join(',') },
    });
    for (const construct of props.after ?? []) this.resource.node.addDependency(construct);

    const logicalId = Stack.of(this).getLogicalId(this.function.node.defaultChild as never);
    // cdk-nag (infra/aws/nag.ts conventions): CDK's provider framework may invoke every version of the function.
    for (const [construct, finding, reason] of [
      [this, `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`, "CDK's custom resource provider framework may invoke every version of the migration function; the wildcard is that one function's qualifiers."],
      [this.function, 'AwsSolutions-IAM5[Resource::*]', 'X-Ray tracing: xray:PutTraceSegments and PutTelemetryRecords support no resource-level permissions (test/infra/aws/nag.test.ts checks that no other action is granted on *).'],
      [this.function, 'AwsSolutions-L1', 'nodejs22.x on purpose: the bundles are built for node22 (esbuild target) and checked on Node 20 and 22; a newer runtime is adopted together with its build target.'],
    ] as const) {
      acknowledge(construct, finding, reason);
    }
  }
}

/** The same mechanism as infra/aws/nag.ts: CDK's own acknowledgement, which cdk-nag honours. */
function acknowledge(construct: IConstruct, id: string, reason: string): void {
  Validations.of(construct).acknowledge({ id, reason });
}

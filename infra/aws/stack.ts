/**
 * The whole deployment: tables (shared/tables.ts), one function per family and the REST API
 * (shared/routes.ts). Environment-agnostic, so `cdk synth` needs no credentials and no network.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { families as routeFamilies, routes as routeTable, type Route } from '../../shared/routes.js';
import { createRestApi } from './api.js';
import { FamilyFunctions } from './functions.js';
import { createTables, pascal, type TableId, type Tables } from './tables.js';

export interface EntityRecordApiStackProps extends StackProps {
  /** Families to deploy; default every family of the route table. Routes of others are left out. */
  families?: readonly string[];
  /** Extra environment for every function (ALLOWED_ORIGINS, RATE_LIMIT_*, API_DEPRECATIONS, ...). */
  environment?: Record<string, string>;
  /** Stage-wide API Gateway throttling (requests per second, burst). */
  throttling?: { rateLimit: number; burstLimit: number };
  /** For tests only: code for every function instead of bundling functions/<family>/handler.ts. */
  code?: lambda.Code;
}

export class EntityRecordApiStack extends Stack {
  readonly tables: Tables;
  readonly functions: FamilyFunctions;
  readonly api: RestApi;

  constructor(scope: Construct, id: string, props: EntityRecordApiStackProps = {}) {
    super(scope, id, props);
    const families = props.families ?? routeFamilies;
    const deployed = new Set(families);
    const routes: Route[] = routeTable.filter((r) => deployed.has(r.family));

    const tables = (this.tables = createTables(this));
    this.functions = new FamilyFunctions(this, 'Functions', { families, tables, environment: props.environment, code: props.code });
    const api = (this.api = createRestApi(this, 'Api', {
      routes,
      functionFor: (family) => this.functions.get(family),
      throttling: props.throttling,
    }));

    new CfnOutput(this, 'ApiUrl', { value: api.url, description: 'Base URL of the API (stage prod); e.g. <ApiUrl>api/health' });
    for (const [tableId, table] of Object.entries(tables) as [TableId, (typeof tables)[TableId]][]) {
      if (!table) continue;
      new CfnOutput(this, `${pascal(tableId)}TableName`, { value: table.tableName, description: `DynamoDB table '${tableId}'` });
    }
  }
}

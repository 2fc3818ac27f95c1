/**
 * One DynamoDB Local (in memory) and one local API server for the whole run; test files reach
 * them through inject('baseUrl') and inject('dynamoEndpoint'). Each test file makes its own
 * tenant, so files do not share records.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDynamoLocal } from '../../infra/local/dynamodb-local.js';
import { startServer } from './server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    dynamoEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Everything the run puts in the temp folder (CDK's cdk.out* assemblies, test directories) goes
  // into one folder of its own, removed at the end: the test processes inherit this TMPDIR.
  const runTmp = mkdtempSync(join(tmpdir(), 'entity-record-api-tests-'));
  process.env.TMPDIR = runTmp;
  // This process talks to DynamoDB Local too; on Node 20 the SDK's notice about Node 22 is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // Every DynamoDB Local of the run (this one, and those `npm start` starts in tests of its own
  // DATA_DIR) is a JVM that lives seconds to minutes: compiling hot code with C2 costs it more CPU
  // than it saves (an engine started, seeded and stopped used 40 % less CPU with C1 only), and
  // the serial collector suits its small heap. The `java` launcher reads JDK_JAVA_OPTIONS.
  process.env.JDK_JAVA_OPTIONS ??= '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';
  const engine = await startDynamoLocal();
  const server = await startServer({ dynamoEndpoint: engine.endpoint });
  project.provide('baseUrl', server.url);
  project.provide('dynamoEndpoint', engine.endpoint);
  return async () => {
    await server.stop();
    await engine.stop();
    rmSync(runTmp, { recursive: true, force: true });
  };
}

/**
 * The order of the timeouts, for every function of the synthesized stack (shared/http/deadline.ts):
 * an API function's timeout plus Lambda's longest init phase fits in its integration's timeout,
 * and the stack's own 504 comes before the function's timeout; a streaming family runs up to its
 * streamed integration's 15 minutes; the webhook functions and the bootstrap custom resource
 * stay inside what waits for them.
 */
import { App } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack } from '../../../infra/aws/stack.js';
import { DEADLINE_MARGIN_MS, INTEGRATION_TIMEOUT_SECONDS, MAX_INIT_SECONDS } from '../../../shared/http/deadline.js';
import { families, STREAMING_FAMILIES, STREAMING_TIMEOUT_SECONDS } from '../../../shared/routes.js';
import { config } from '../../../shared/config.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

let stack: EntityRecordApiStack;
let resources: Record<string, any>;

const id = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);

beforeAll(() => {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  stack = new EntityRecordApiStack(app, 'TimeoutsTest', { code: lambda.Code.fromInline('export const handler = async () => ({});') });
  resources = app.synth().getStackByName('TimeoutsTest').template.Resources;
}, 180_000);

describe('timeouts in the right order', () => {
  it.each(families)('%s: its own answer < function timeout < the integration timeout of every method that invokes it', (family) => {
    const fnId = id(stack.functions.get(family));
    const timeoutSeconds: number = resources[fnId].Properties.Timeout;
    const methods = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGateway::Method' && JSON.stringify(r.Properties.Integration.Uri).includes(`"${fnId}"`));
    expect(methods.length, `methods of ${family}`).toBeGreaterThan(0);

    for (const method of methods) {
      // API Gateway's default when the template sets none: 29 s.
      const integrationMs: number = method.Properties.Integration.TimeoutInMillis ?? INTEGRATION_TIMEOUT_SECONDS * 1000;
      if ((STREAMING_FAMILIES as readonly string[]).includes(family)) {
        // A streamed response: the function runs up to the streamed integration's limit (and ends the stream itself before).
        expect(timeoutSeconds).toBe(STREAMING_TIMEOUT_SECONDS);
        expect(timeoutSeconds * 1000).toBeLessThanOrEqual(integrationMs);
      } else {
        // A cold start's init (up to MAX_INIT_SECONDS) is not counted in the function's timeout but is in the integration's.
        expect((timeoutSeconds + MAX_INIT_SECONDS) * 1000).toBeLessThanOrEqual(integrationMs);
      }
    }
    expect(DEADLINE_MARGIN_MS).toBeLessThan(timeoutSeconds * 1000);
  });

  it('webhook delivery: the receiver timeout < the function timeout, and the queue waits 6 times the function before a redelivery', () => {
    const webhooks = stack.webhooks!;
    const deliver = resources[id(webhooks.deliveryFunction)].Properties.Timeout as number;
    expect(config().webhooks.timeoutMs).toBeLessThan(deliver * 1000);
    expect(resources[id(webhooks.queue)].Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * deliver);
  });

  it('webhook fan-out: a stream batch has its function timeout (no gateway in front), bounded by the retries and record age of its mapping', () => {
    const fanoutId = id(stack.webhooks!.fanoutFunction);
    const mapping = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName?.Ref === fanoutId)!;
    const timeout = resources[fanoutId].Properties.Timeout as number;
    expect(timeout).toBeLessThanOrEqual(900);
    expect(mapping.Properties.MaximumRecordAgeInSeconds).toBeGreaterThan(timeout);
  });

  it('bootstrap custom resource: its function ends before the provider framework that waits for it', () => {
    const bootstrapId = id(stack.bootstrapAdmin.function);
    const bootstrap = resources[bootstrapId].Properties.Timeout as number;
    // The entity-migrations custom resource has a framework of its own (its event only starts the job).
    const framework = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::Function' && JSON.stringify(r.Properties.Environment?.Variables?.USER_ON_EVENT_FUNCTION_ARN ?? {}).includes(`"${bootstrapId}"`),
    );
    expect(framework).toHaveLength(1);
    expect(bootstrap).toBeLessThan(framework[0].Properties.Timeout);
  });

  it('gives every function of the stack a timeout (none left at the 3 s default)', () => {
    const fns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    for (const fn of fns) expect(fn.Properties.Timeout, fn.Properties.Description).toBeGreaterThan(3);
  });
});

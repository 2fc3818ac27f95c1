/**
 * What the Lambda runtime provides, for handlers run locally: the `awslambda` global (response
 * streaming), a context with the remaining time, and loading a family's handler module — the
 * very module Lambda runs.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';

const STREAMING = Symbol.for('entity-record-api.local.streaming');

export interface StreamPrelude {
  statusCode?: number;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
}

/** A response stream whose first write sends the prelude (status and headers). */
export abstract class ResponseStream extends Writable {
  abstract setPrelude(prelude: StreamPrelude): void;
}

type StreamingHandler = ((event: unknown, stream: ResponseStream, context: Context) => Promise<void>) & { [STREAMING]?: true };

// Other libraries (the AWS SDK's invoke store) may create `awslambda` first, with members of
// their own: the streaming members are added to whatever object is there.
const globals = globalThis as { awslambda?: Record<string, unknown> };
const runtime = (globals.awslambda ??= {});
runtime.streamifyResponse ??= function streamifyResponse(fn: StreamingHandler) {
  fn[STREAMING] = true;
  return fn;
};
runtime.HttpResponseStream ??= {
  from(stream: ResponseStream, prelude: StreamPrelude) {
    stream.setPrelude(prelude);
    return stream;
  },
};

export type LambdaHandler = (event: unknown, contextOrStream: unknown, context?: unknown) => Promise<unknown>;

export function isStreaming(handler: LambdaHandler): boolean {
  return (handler as StreamingHandler)[STREAMING] === true;
}

export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const handlers = new Map<string, Promise<LambdaHandler>>();

export function loadHandler(family: string): Promise<LambdaHandler> {
  let loaded = handlers.get(family);
  if (!loaded) {
    loaded = import(`../../functions/${family}/handler.ts`).then((m: { handler: LambdaHandler }) => m.handler);
    handlers.set(family, loaded);
  }
  return loaded;
}

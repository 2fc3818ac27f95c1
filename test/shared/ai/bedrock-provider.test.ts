/**
 * The Bedrock provider against a mocked Bedrock Runtime client (aws-sdk-client-mock): the Converse
 * request it sends, the tokens it reports, and the API errors Bedrock's failures become.
 */
import { BedrockRuntimeClient, ConverseCommand, ModelTimeoutException, ServiceUnavailableException, ThrottlingException, ValidationException, AccessDeniedException } from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { BedrockProvider, RETRY_AFTER_SECONDS } from '../../../shared/ai/bedrock-provider.js';
import { ApiError } from '../../../shared/errors.js';

const bedrock = mockClient(BedrockRuntimeClient);
const request = { prompt: 'Say hello', maxTokens: 50, temperature: 0.3, modelId: 'amazon.nova-micro-v1:0' };

function provider(timeoutMs = 25_000) {
  return new BedrockProvider(new BedrockRuntimeClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } }), timeoutMs);
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a failure');
}

const meta = { $metadata: {}, message: 'internal detail: arn:aws:bedrock:us-east-1::foundation-model/x' };

afterEach(() => bedrock.reset());

describe('BedrockProvider', () => {
  it('sends one Converse request with the prompt as a user message and the inference settings', async () => {
    bedrock.on(ConverseCommand).resolves({
      output: { message: { role: 'assistant', content: [{ text: 'Hello' }, { text: ' there' }] } },
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
      stopReason: 'end_turn',
      metrics: { latencyMs: 10 },
    });

    const result = await provider().generate(request);

    const calls = bedrock.commandCalls(ConverseCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0].args[0].input).toEqual({
      modelId: 'amazon.nova-micro-v1:0',
      messages: [{ role: 'user', content: [{ text: 'Say hello' }] }],
      inferenceConfig: { maxTokens: 50, temperature: 0.3 },
    });
    expect(result).toEqual({ text: 'Hello there', inputTokens: 3, outputTokens: 2 });
  });

  it('reports the output tokens Bedrock counted, never more than maxTokens', async () => {
    bedrock.on(ConverseCommand).resolves({
      output: { message: { role: 'assistant', content: [{ text: 'long answer' }] } },
      usage: { inputTokens: 400, outputTokens: 80, totalTokens: 480 },
      stopReason: 'max_tokens',
      metrics: { latencyMs: 10 },
    });

    const result = await provider().generate(request);

    expect(result.outputTokens).toBe(50);
    expect(result.inputTokens).toBe(400);
  });

  it('turns throttling into 503 with Retry-After, without Bedrock’s message', async () => {
    bedrock.on(ConverseCommand).rejects(new ThrottlingException(meta));

    const error = await failure(provider().generate(request));

    expect(error.status).toBe(503);
    expect(error.headers['Retry-After']).toBe(String(RETRY_AFTER_SECONDS));
    expect(JSON.stringify(error.toJSON())).not.toContain('arn:aws');
  });

  it('turns an unavailable service into 503', async () => {
    bedrock.on(ConverseCommand).rejects(new ServiceUnavailableException(meta));

    expect((await failure(provider().generate(request))).status).toBe(503);
  });

  it('turns a validation error into 400', async () => {
    bedrock.on(ConverseCommand).rejects(new ValidationException(meta));

    const error = await failure(provider().generate(request));

    expect(error.status).toBe(400);
    expect(error.toJSON()).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
    expect(JSON.stringify(error.toJSON())).not.toContain('internal detail');
  });

  it('answers 504 when Bedrock does not answer in time, and aborts the call', async () => {
    let signal: AbortSignal | undefined;
    // Bedrock never answers.
    bedrock.on(ConverseCommand).callsFake(() => new Promise(() => undefined));
    const client = new BedrockRuntimeClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const send = client.send.bind(client);
    client.send = ((command: ConverseCommand, options?: { abortSignal?: AbortSignal }) => {
      signal = options?.abortSignal;
      return send(command, options as never);
    }) as typeof client.send;

    const started = Date.now();
    const error = await failure(new BedrockProvider(client, 50).generate(request));

    expect(error.status).toBe(504);
    expect(error.code).toBe('GATEWAY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(signal?.aborted).toBe(true);
  });

  it('turns the model’s own timeout into 504 and anything else into 502, never 500', async () => {
    bedrock.on(ConverseCommand).rejectsOnce(new ModelTimeoutException(meta)).rejectsOnce(new AccessDeniedException(meta)).rejectsOnce(new Error('socket hang up'));

    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await failure(provider().generate(request))).status);

    expect(statuses).toEqual([504, 502, 502]);
  });
});

/**
 * Amazon Bedrock through the Converse API (one request shape for every model). A call that takes
 * longer than the timeout is aborted (504); Bedrock's own errors become API errors that say
 * what the caller can do, and never carry Bedrock's message (it is logged instead):
 *   throttling, quota, model not ready, service unavailable → 503 with Retry-After
 *   validation (the model refused the parameters or the prompt) → 400
 *   model timeout or our own timeout → 504
 *   anything else (access denied, unknown model, model error) → 502
 */
import { BedrockRuntimeClient, ConverseCommand, type ConverseCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { ApiError, BadGatewayError, BadRequestError, GatewayTimeoutError, ServiceUnavailableError } from '../errors.js';
import { logger } from '../logger.js';
import type { GenerationRequest, GenerationResult, TextProvider } from './provider.js';

const RETRY_LATER = new Set(['ThrottlingException', 'ServiceQuotaExceededException', 'ServiceUnavailableException', 'ModelNotReadyException', 'InternalServerException']);
const TIMED_OUT = new Set(['ModelTimeoutException', 'TimeoutError', 'AbortError', 'RequestTimeout']);
/** Seconds a client should wait after Bedrock throttled or was unavailable. */
export const RETRY_AFTER_SECONDS = 5;

class ProviderTimeout extends Error {
  constructor() {
    super('provider call timed out');
    this.name = 'TimeoutError';
  }
}

/** The API error a failed Converse call answers. */
export function providerError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const name = (error as { name?: string } | undefined)?.name ?? 'Error';
  if (RETRY_LATER.has(name)) return new ServiceUnavailableError('Text generation is busy; retry later', RETRY_AFTER_SECONDS, error);
  if (name === 'ValidationException') return new BadRequestError('The model refused the request: check prompt, maxTokens and temperature', { prompt: 'refused by the model' }, 'INVALID_REQUEST', error);
  if (TIMED_OUT.has(name)) return new GatewayTimeoutError('Text generation did not finish in time', 'GATEWAY_TIMEOUT', error);
  return new BadGatewayError('Text generation failed', 'AI_PROVIDER_ERROR', error);
}

function textOf(output: ConverseCommandOutput): string {
  const content = output.output?.message?.content ?? [];
  return content.map((block) => ('text' in block && typeof block.text === 'string' ? block.text : '')).join('');
}

export class BedrockProvider implements TextProvider {
  constructor(
    private readonly client: BedrockRuntimeClient,
    private readonly timeoutMs: number,
  ) {}

  async generate({ prompt, maxTokens, temperature, modelId }: GenerationRequest): Promise<GenerationResult> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new ProviderTimeout());
      }, this.timeoutMs);
    });
    try {
      const output = await Promise.race([
        this.client.send(
          new ConverseCommand({
            modelId,
            messages: [{ role: 'user', content: [{ text: prompt }] }],
            inferenceConfig: { maxTokens, temperature },
          }),
          { abortSignal: abort.signal },
        ),
        timeout,
      ]);
      const text = textOf(output);
      // Bedrock reports the tokens it generated; the caller is never charged beyond maxTokens.
      const outputTokens = Math.min(maxTokens, output.usage?.outputTokens ?? 0);
      return { text, inputTokens: output.usage?.inputTokens ?? 0, outputTokens };
    } catch (error) {
      const apiError = providerError(error);
      logger.warn('text generation failed', { modelId, error: (error as Error)?.name, message: (error as Error)?.message, status: apiError.status });
      throw apiError;
    } finally {
      clearTimeout(timer);
    }
  }
}

export function createBedrockClient(region: string): BedrockRuntimeClient {
  // One retry: the 25 s budget is better spent answering 503 than waiting out back-offs.
  return new BedrockRuntimeClient({ region, maxAttempts: 2 });
}

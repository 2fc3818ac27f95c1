/**
 * Text generation settings, read from the environment once per cold start (docs/configuration.md).
 * On AWS the stack sets AI_PROVIDER=bedrock and the two model ids from CDK context.
 */
export type ModelName = 'fast' | 'quality';
export const MODEL_NAMES: readonly ModelName[] = ['fast', 'quality'];

/** Bedrock model ids used when none is configured: a small and a large Amazon Nova model. */
export const DEFAULT_MODEL_IDS: Readonly<Record<ModelName, string>> = {
  fast: 'amazon.nova-micro-v1:0',
  quality: 'amazon.nova-pro-v1:0',
};

export interface AiConfig {
  provider: 'local' | 'bedrock';
  modelIds: Record<ModelName, string>;
  /** A user's balance before their first call or grant. */
  defaultCredits: number;
  /** How long a provider call may take before the request answers 504. */
  timeoutMs: number;
  region: string;
}

function int(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return value;
}

function load(): AiConfig {
  const provider = process.env.AI_PROVIDER || 'local';
  if (provider !== 'local' && provider !== 'bedrock') throw new Error(`AI_PROVIDER must be 'local' or 'bedrock', got '${provider}'`);
  return {
    provider,
    modelIds: {
      fast: process.env.AI_MODEL_FAST || DEFAULT_MODEL_IDS.fast,
      quality: process.env.AI_MODEL_QUALITY || DEFAULT_MODEL_IDS.quality,
    },
    defaultCredits: int('AI_DEFAULT_CREDITS', 10000),
    timeoutMs: Math.max(1, int('AI_TIMEOUT_MS', 25000)),
    region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
  };
}

let cached: AiConfig | undefined;

export function aiConfig(): AiConfig {
  cached ??= load();
  return cached;
}

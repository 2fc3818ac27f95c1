/**
 * Text generation paid with credits: reserve maxTokens, call the provider, settle the difference
 * (or refund everything when the provider fails), and the admin grant of credits.
 */
import { ForbiddenError, NotFoundError } from '../errors.js';
import { getUser } from '../data/index.js';
import { logger } from '../logger.js';
import type { AuthContext } from '../caller.js';
import { aiConfig, type ModelName } from './config.js';
import { getCredits, grantCredits, listGrants, refundCredits, reserveCredits, settleCredits, type Credits, type Grant } from './credits.js';
import { LocalProvider } from './local-provider.js';
import type { TextProvider } from './provider.js';

export interface GenerateInput {
  prompt: string;
  maxTokens: number;
  temperature: number;
  model: ModelName;
}

export interface GenerateOutput {
  text: string;
  tokensUsed: number;
  model: ModelName;
  /** The provider's model: a Bedrock model id, or local-fast / local-quality. */
  modelId: string;
}

let provider: Promise<TextProvider> | undefined;

function textProvider(): Promise<TextProvider> {
  provider ??= (async () => {
    const cfg = aiConfig();
    if (cfg.provider !== 'bedrock') return new LocalProvider();
    // Loaded on first use: `npm start` with the local provider never loads the Bedrock client.
    const { BedrockProvider, createBedrockClient } = await import('./bedrock-provider.js');
    return new BedrockProvider(createBedrockClient(cfg.region), cfg.timeoutMs);
  })();
  return provider;
}

function modelId(model: ModelName): string {
  const cfg = aiConfig();
  return cfg.provider === 'bedrock' ? cfg.modelIds[model] : `local-${model}`;
}

export async function generate(auth: AuthContext, input: GenerateInput): Promise<GenerateOutput> {
  const cfg = aiConfig();
  const userId = auth.user.id;
  const id = modelId(input.model);
  await reserveCredits(userId, input.maxTokens, cfg.defaultCredits);
  let result;
  try {
    result = await (await textProvider()).generate({ prompt: input.prompt, maxTokens: input.maxTokens, temperature: input.temperature, modelId: id });
  } catch (error) {
    await refundCredits(userId, input.maxTokens).catch((refundError: unknown) =>
      logger.error('credits refund failed', { userId, amount: input.maxTokens, error: (refundError as Error).name }),
    );
    throw error;
  }
  const tokensUsed = Math.min(result.outputTokens, input.maxTokens);
  await settleCredits(userId, input.maxTokens, { tokensUsed, model: input.model, at: new Date().toISOString() });
  return { text: result.text, tokensUsed, model: input.model, modelId: id };
}

export function credits(auth: AuthContext): Promise<Credits> {
  return getCredits(auth.user.id, aiConfig().defaultCredits);
}

/** An admin's view of a user of their tenant; anyone else, or a user of another tenant: 404/403. */
async function tenantUser(auth: AuthContext, userId: string) {
  if (auth.user.role !== 'admin') throw new ForbiddenError('Only an admin can see or grant another user’s credits');
  const user = await getUser(userId);
  if (!user || user.tenantId !== auth.tenantId) throw new NotFoundError(`User '${userId}' not found`);
  return user;
}

export async function userCredits(auth: AuthContext, userId: string): Promise<Credits & { userId: string; grants: Grant[] }> {
  await tenantUser(auth, userId);
  const [balance, grants] = await Promise.all([getCredits(userId, aiConfig().defaultCredits), listGrants(userId)]);
  return { userId, ...balance, grants };
}

export async function grant(auth: AuthContext, userId: string, amount: number, reason?: string): Promise<{ userId: string; balance: number; grant: Grant }> {
  const user = await tenantUser(auth, userId);
  const entry = await grantCredits({ userId: user.id, tenantId: user.tenantId, amount, reason, grantedBy: auth.user.id, defaultCredits: aiConfig().defaultCredits });
  logger.info('ai credits granted', { grantId: entry.id, userId: user.id, tenantId: user.tenantId, amount, grantedBy: auth.user.id });
  return { userId: user.id, balance: entry.balanceAfter, grant: entry };
}

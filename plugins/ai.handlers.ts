/** Handlers of plugins/ai.plugin.ts: bodies arrive checked against the route's schema, defaults applied. */
import type { ApiRequest, Reply } from '../shared/http/types.js';
import { credits as callerCredits, generate as generateText, grant, userCredits as creditsOf, type GenerateInput } from '../shared/ai/service.js';

export async function generate(req: ApiRequest): Promise<Reply> {
  return { status: 200, data: await generateText(req.auth!, req.body as GenerateInput) };
}

export async function credits(req: ApiRequest): Promise<Reply> {
  return { data: await callerCredits(req.auth!) };
}

export async function userCredits(req: ApiRequest): Promise<Reply> {
  return { data: await creditsOf(req.auth!, req.params.userId) };
}

export async function grantCredits(req: ApiRequest): Promise<Reply> {
  const { amount, reason } = req.body as { amount: number; reason?: string };
  return { status: 200, data: await grant(req.auth!, req.params.userId, amount, reason) };
}

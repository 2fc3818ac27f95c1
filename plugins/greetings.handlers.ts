/** Handlers of plugins/greetings.plugin.ts: the same ApiRequest and Reply as every core operation. */
import type { ApiRequest, Reply } from '../shared/http/types.js';

export async function greet(req: ApiRequest): Promise<Reply> {
  const { name, excited } = req.body as { name: string; excited: boolean };
  return { status: 200, data: { greeting: `Hello, ${name}${excited ? '!' : '.'}`, from: req.auth!.user.email } };
}

export async function hello(): Promise<Reply> {
  return { data: { greeting: 'Hello, world.' } };
}

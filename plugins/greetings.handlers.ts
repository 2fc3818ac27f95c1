/**
 * Handlers of plugins/greetings.plugin.ts: the same ApiRequest and Reply as every core operation,
 * one checked map (PluginHandlers) typed by the declaration: `req.body` has its route's schema's type.
 */
import type { PluginHandlers } from '../shared/http/types.js';
import type greetings from './greetings.plugin.js';

export const { greet, hello }: PluginHandlers<typeof greetings> = {
  greet: async (req) => {
    const { name, excited } = req.body;
    return { status: 200, data: { greeting: `Hello, ${name}${excited ? '!' : '.'}`, from: req.auth!.user.email } };
  },
  hello: async () => ({ data: { greeting: 'Hello, world.' } }),
};

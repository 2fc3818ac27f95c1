/**
 * The worked example of a plugin (docs/plugins.md): one declaration of plain data, one module
 * with its handlers (plugins/greetings.handlers.ts).
 */
import { definePlugin } from '../shared/plugins/types.js';

export default definePlugin({
  name: 'greetings',
  description: 'Says hello',
  routes: [
    {
      method: 'POST',
      path: '/api/v1/greetings',
      handler: 'greet',
      auth: 'required',
      scopes: ['greetings:write'],
      rateLimit: { limit: 3, window: '1h' },
      summary: 'Greets someone on behalf of the caller',
      status: 200,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: { name: { type: 'string', minLength: 1, maxLength: 50 }, excited: { type: 'boolean', default: false } },
      },
      response: {
        type: 'object',
        properties: { greeting: { type: 'string' }, from: { type: 'string' } },
        required: ['greeting', 'from'],
      },
    },
    {
      method: 'GET',
      path: '/api/v1/greetings/hello',
      handler: 'hello',
      auth: 'none',
      summary: 'A greeting for anyone',
      response: { type: 'object', properties: { greeting: { type: 'string' } }, required: ['greeting'] },
    },
  ],
});

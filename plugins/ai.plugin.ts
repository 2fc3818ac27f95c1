/**
 * Text generation: Amazon Bedrock on AWS, a deterministic local model under `npm start`, paid
 * with per-user credits. Handlers: plugins/ai.handlers.ts (shared/ai/).
 */
import { definePlugin } from '../shared/plugins/types.js';

const perHour = process.env.AI_RATE_LIMIT_PER_HOUR ? Number(process.env.AI_RATE_LIMIT_PER_HOUR) : 20;

const credits = {
  type: 'object',
  properties: {
    balance: { type: 'integer' },
    lastUsage: {
      type: ['object', 'null'],
      properties: { tokensUsed: { type: 'integer' }, model: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
    },
  },
  required: ['balance', 'lastUsage'],
};

const grant = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    userId: { type: 'string' },
    tenantId: { type: 'string' },
    amount: { type: 'integer' },
    reason: { type: ['string', 'null'] },
    grantedBy: { type: 'string' },
    balanceAfter: { type: 'integer' },
    at: { type: 'string', format: 'date-time' },
  },
};

export default definePlugin({
  name: 'ai',
  description: 'Text generation with per-user credits',
  routes: [
    {
      method: 'POST',
      path: '/api/v1/ai/generate',
      handler: 'generate',
      auth: 'required',
      scopes: ['ai:write'],
      rateLimit: { limit: perHour, window: '1h' },
      summary: 'Generates text; reserves maxTokens credits and charges tokensUsed',
      operationId: 'generateText',
      description: 'Charged in credits (402 INSUFFICIENT_CREDITS when they run out); 20 requests per hour per user.',
      example: { prompt: 'Summarise my open tasks', maxTokens: 100 },
      status: 200,
      errors: ['INVALID_REQUEST', 'VALIDATION_FAILED', 'INSUFFICIENT_CREDITS', 'AI_PROVIDER_ERROR', 'SERVICE_UNAVAILABLE', 'GATEWAY_TIMEOUT'],
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['prompt'],
        properties: {
          prompt: { type: 'string', minLength: 1, maxLength: 1000 },
          maxTokens: { type: 'integer', minimum: 10, maximum: 500, default: 100 },
          temperature: { type: 'number', minimum: 0, maximum: 1, default: 0.7 },
          model: { type: 'string', enum: ['fast', 'quality'], default: 'fast' },
        },
      },
      response: {
        type: 'object',
        properties: {
          text: { type: 'string' },
          tokensUsed: { type: 'integer' },
          model: { type: 'string', enum: ['fast', 'quality'] },
          modelId: { type: 'string' },
        },
        required: ['text', 'tokensUsed', 'model'],
      },
    },
    {
      method: 'GET',
      path: '/api/v1/ai/credits',
      handler: 'credits',
      auth: 'required',
      scopes: ['ai:read'],
      summary: "The caller's credit balance and last usage",
      response: credits,
    },
    {
      method: 'GET',
      path: '/api/v1/ai/credits/{userId}',
      handler: 'userCredits',
      auth: 'required',
      scopes: ['ai:read'],
      summary: "A user's balance, last usage and latest grants (admins, own tenant)",
      errors: ['FORBIDDEN', 'NOT_FOUND'],
      response: { ...credits, properties: { ...credits.properties, userId: { type: 'string' }, grants: { type: 'array', items: grant } } },
    },
    {
      method: 'POST',
      path: '/api/v1/ai/credits/{userId}',
      handler: 'grantCredits',
      auth: 'required',
      scopes: ['ai:write'],
      summary: 'Grants credits to a user of the admin’s tenant (audited)',
      status: 200,
      errors: ['INVALID_REQUEST', 'VALIDATION_FAILED', 'FORBIDDEN', 'NOT_FOUND'],
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['amount'],
        properties: {
          amount: { type: 'integer', minimum: 1, maximum: 1000000 },
          reason: { type: 'string', maxLength: 200 },
        },
      },
      response: { type: 'object', properties: { userId: { type: 'string' }, balance: { type: 'integer' }, grant } },
    },
  ],
});

/**
 * The webhooks family's routes: registrations, delivery log, replay, test ping; POST /webhooks/{id}
 * is the inbound receiver of a provider (API Gateway allows one parameter name per level, hence
 * {id}). The bodies below are checked by the middleware stack; the target rule (https, a public
 * address) is the service's: it resolves the name.
 */
import type { RouteDocs } from '../route-types.js';
import { BODY, OBJECT, PAGE_QUERY, STRING, V1, familyRoutes } from './declare.js';

const WEBHOOK_FIELDS = {
  url: { type: 'string', minLength: 1, maxLength: 2048, description: 'An https:// URL that resolves to a public address.' },
  events: { type: 'array', minItems: 1, items: STRING, description: 'Event names such as task.created.' },
  secret: { type: 'string', minLength: 8, maxLength: 512, writeOnly: true },
} as const;

export const webhookBodySchemas = {
  createWebhook: { type: 'object', required: ['url', 'events', 'secret'], additionalProperties: false, properties: WEBHOOK_FIELDS },
  updateWebhook: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { ...WEBHOOK_FIELDS, status: { type: 'string', enum: ['active', 'disabled'], description: '`active` re-enables a disabled webhook.' } },
  },
} as const;

export const webhooksRoutes = /* @__PURE__ */ familyRoutes('webhooks', [
  {
    method: 'POST',
    path: `${V1}/webhooks`,
    operation: 'createWebhook',
    auth: 'required',
    scope: 'webhooks:write',
    errors: [...BODY, 'LIMIT_EXCEEDED'],
    summary: 'Register a webhook',
    body: webhookBodySchemas.createWebhook,
    response: 'Webhook',
  },
  {
    method: 'GET',
    path: `${V1}/webhooks`,
    operation: 'listWebhooks',
    auth: 'required',
    scope: 'webhooks:read',
    summary: "The tenant's webhooks",
    response: 'Webhook',
  },
  { method: 'GET', path: `${V1}/webhooks/{id}`, operation: 'getWebhook', auth: 'required', scope: 'webhooks:read', errors: ['NOT_FOUND'], summary: 'A webhook', response: 'Webhook' },
  {
    method: 'PATCH',
    path: `${V1}/webhooks/{id}`,
    operation: 'updateWebhook',
    auth: 'required',
    scope: 'webhooks:write',
    errors: [...BODY, 'NOT_FOUND'],
    summary: 'Change a webhook',
    body: webhookBodySchemas.updateWebhook,
    response: 'Webhook',
  },
  {
    method: 'DELETE',
    path: `${V1}/webhooks/{id}`,
    operation: 'deleteWebhook',
    auth: 'required',
    scope: 'webhooks:write',
    errors: ['NOT_FOUND'],
    summary: 'Remove a webhook',
  },
  // `{id}` is the provider's name: API Gateway allows one parameter name per path level.
  {
    method: 'POST',
    path: `${V1}/webhooks/{id}`,
    operation: 'receiveProviderWebhook',
    auth: 'public',
    rawBody: true,
    errors: ['INVALID_REQUEST', 'INVALID_SIGNATURE', 'NOT_FOUND'],
    summary: 'Inbound provider webhook',
  },
  {
    method: 'GET',
    path: `${V1}/webhooks/{id}/deliveries`,
    operation: 'listWebhookDeliveries',
    auth: 'required',
    scope: 'webhooks:read',
    errors: ['INVALID_REQUEST', 'NOT_FOUND'],
    summary: 'Delivery attempts of a webhook',
    query: PAGE_QUERY,
  },
  {
    method: 'POST',
    path: `${V1}/webhooks/{id}/deliveries/{deliveryId}/retry`,
    operation: 'retryWebhookDelivery',
    auth: 'required',
    scope: 'webhooks:write',
    errors: ['NOT_FOUND'],
    summary: 'Deliver an attempt again',
  },
  { method: 'POST', path: `${V1}/webhooks/{id}/test`, operation: 'pingWebhook', auth: 'required', scope: 'webhooks:write', errors: ['NOT_FOUND'], summary: 'Send a test event to a webhook' },
]);

/** The API description of each route, by operation (only the API description builds it: a cold start does not). */
export function webhooksDocs(): RouteDocs<(typeof webhooksRoutes)[number]> {
  return {
    createWebhook: ({ json, envelopeOf, ref }) => ({
      tag: 'Webhooks',
      description: 'Deliveries are POSTed to `url`, signed with `secret` (see the `webhooks` section). Needs `webhooks:write`.',
      requestBody: { example: { url: 'https://example.com/hooks', events: ['task.created'], secret: 'a shared secret' } },
      responses: { 201: json(envelopeOf(ref('Webhook')), 'The registration (never the secret).') },
      errors: [400, 422],
    }),
    listWebhooks: ({ json, envelopeOf, ref }) => ({ tag: 'Webhooks', responses: { 200: json(envelopeOf({ type: 'array', items: ref('Webhook') }), 'Registrations.') }, errors: [] }),
    deleteWebhook: ({ message }) => ({ tag: 'Webhooks', responses: { 200: message('Removed.') }, errors: [404] }),
    receiveProviderWebhook: ({ json }) => ({
      tag: 'Webhooks',
      description:
        'The path parameter is the provider, one of INBOUND_WEBHOOK_SECRETS: `generic` checks `x-webhook-signature` (hex HMAC-SHA256 of the raw body), `stripe` checks `Stripe-Signature`.',
      parameters: [
        { name: 'x-webhook-signature', in: 'header', required: false, description: 'generic: lowercase hex HMAC-SHA256 of the raw body.', schema: STRING },
        { name: 'Stripe-Signature', in: 'header', required: false, description: 'stripe: t=…,v1=….', schema: STRING },
      ],
      requestBody: { schema: OBJECT },
      responses: { 200: json({ type: 'object', required: ['received'], properties: { received: { const: true } } }, 'Accepted.') },
      errors: [400, 404],
    }),
    listWebhookDeliveries: ({ json, envelopeOf }) => ({ tag: 'Webhooks', responses: { 200: json(envelopeOf({ type: 'array', items: OBJECT }), 'Attempts with status, response code and time.') }, errors: [404] }),
  };
}

/**
 * The `webhooks` section of the document (OpenAPI 3.1): what a registered webhook receives — one
 * entry per event type (`<entity name>.created|updated|deleted` for every entity), the delivery
 * payload `{id, type, createdAt, data}` and the signature header.
 */
import type { LoadedEntity } from '../registry/index.js';
import type { Schema } from './components.js';
import { schemaNames } from './entities.js';

export const EVENT_ACTIONS = ['created', 'updated', 'deleted'] as const;

export const SIGNATURE_HEADER = 'x-webhook-signature';

export function eventTypes(entities: readonly LoadedEntity[]): string[] {
  return entities.flatMap((e) => EVENT_ACTIONS.map((a) => `${e.name}.${a}`));
}

export function webhookEntries(entities: readonly LoadedEntity[]): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const entity of entities) {
    for (const action of EVENT_ACTIONS) {
      const type = `${entity.name}.${action}`;
      out[type] = {
        post: {
          tags: ['Webhooks'],
          operationId: `on${schemaNames(entity).record}${action[0].toUpperCase()}${action.slice(1)}`,
          summary: `${type} delivery`,
          description:
            `Sent to every webhook registered for \`${type}\` when a ${entity.name} is ${action}${action === 'deleted' ? ' (data is the record as it was)' : ''}. ` +
            `Verify \`${SIGNATURE_HEADER}\`: the lowercase hex HMAC-SHA256 of the raw body keyed with the webhook's secret, compared in constant time. ` +
            'Answer 2xx to acknowledge; other answers and timeouts are retried with back-off, then dead-lettered.',
          security: [],
          parameters: [
            { name: SIGNATURE_HEADER, in: 'header', required: true, description: 'Hex HMAC-SHA256 of the raw body, keyed with the webhook secret.', schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'type', 'createdAt', 'data'],
                  properties: {
                    id: { type: 'string', description: 'The event id: the same on every retry of this delivery.' },
                    type: { const: type },
                    createdAt: { type: 'string', format: 'date-time' },
                    data: { $ref: `#/components/schemas/${schemaNames(entity).record}` },
                  },
                },
              },
            },
          },
          responses: {
            200: {
              description: 'Acknowledged (any 2xx does).',
              content: { 'application/json': { schema: { type: 'object', properties: { received: { const: true } } }, example: { received: true } } },
            },
          },
        },
      };
    }
  }
  return out;
}

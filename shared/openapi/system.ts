/**
 * What a route's description (beside its declaration, shared/route-declarations/<family>.ts) is
 * handed to build its responses with, and the schemas only those descriptions use.
 */
import type { LoadedEntity } from '../registry/index.js';
import type { RouteDocTools } from '../route-types.js';
import { envelopeOf, ref, type Schema } from './components.js';
import { createExample, schemaNames } from './entities.js';

const str: Schema = { type: 'string' };
const object: Schema = { type: 'object', additionalProperties: true };

/** The tools of a route's description; `entity`: the entity a route with `{entity}` in its path is described for. */
export function routeDocTools(entity?: LoadedEntity): RouteDocTools {
  return {
    ref,
    envelopeOf,
    json: (schema, description, extra = {}) => ({ description, schema, ...extra }),
    message: (description) => ({ description, schema: { type: 'object', required: ['success'], properties: { success: { const: true }, message: str, data: {} } } }),
    ...(entity ? { entity: { record: schemaNames(entity).record, create: schemaNames(entity).create, createExample: createExample(entity) } } : {}),
  };
}

/** Schemas only the routes' descriptions use (added when a route that uses them is present). */
export const SYSTEM_SCHEMAS: Record<string, Schema> = {
  ApiIndex: {
    type: 'object',
    additionalProperties: true,
    properties: { name: str, version: str, entities: { type: 'array', items: object }, links: object },
  },
  MigrationState: {
    type: 'object',
    required: ['entity', 'layout', 'state', 'processed', 'total', 'report'],
    properties: {
      entity: str,
      layout: { type: 'object', additionalProperties: true, properties: { hash: str, previous: str } },
      state: { type: 'string', enum: ['pending', 'running', 'done', 'failed'] },
      run: { type: 'integer' },
      changes: { type: 'array', items: str },
      processed: { type: 'integer' },
      total: { type: ['integer', 'null'], description: 'The entity\'s records when the pass began.' },
      added: { type: 'integer', description: 'Records created during the pass that it met too, counted apart from `processed` (which never passes `total`).' },
      startedAt: { type: ['string', 'null'], format: 'date-time' },
      endedAt: { type: ['string', 'null'], format: 'date-time' },
      error: { type: ['string', 'null'] },
      indexes: { type: 'array', items: { type: 'object', properties: { field: str, token: str, ready: { type: 'boolean' } } } },
      sums: {
        type: 'array',
        description: 'Summed fields (`aggregates.sum`) and fields counted per day (`aggregates.days`, `by: "day"`): `ready` once every record is in the counters; until then their sums, averages and counts per day, week or month are answered by a scan.',
        items: { type: 'object', properties: { field: str, token: str, by: { type: 'string', enum: ['day'] }, ready: { type: 'boolean' } } },
      },
      uniques: {
        type: 'array',
        description: 'Unique fields: `ready` once every value held has its uniqueness item; until then a write setting a new value of the field answers 503 with Retry-After.',
        items: { type: 'object', properties: { field: str, ready: { type: 'boolean' } } },
      },
      report: { type: 'object', properties: { count: { type: 'integer' }, entries: { type: 'array', items: object } } },
      writeShards: {
        type: 'object',
        description: "The entity's write shards: `auto` when the write-shards controller chooses them (else the definition pins `shards`), and the count writes and readers use now.",
        properties: { auto: { type: 'boolean' }, shards: { type: 'integer' }, read: { type: 'integer' } },
      },
      trigger: {
        type: ['object', 'null'],
        description: 'Why the write-shards controller started this change (null: the definition changed): split or merge, from and to, the busiest listing key\'s writes per second it measured (mean, lowest and highest window), the threshold and how long it held, in words.',
        properties: {
          by: str,
          action: { type: 'string', enum: ['split', 'merge'] },
          from: { type: 'integer' },
          to: { type: 'integer' },
          rate: { type: 'number' },
          lowest: { type: 'number' },
          highest: { type: 'number' },
          threshold: { type: 'number' },
          seconds: { type: 'integer' },
          reason: str,
          at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
  Webhook: {
    type: 'object',
    required: ['id', 'url', 'events', 'status', 'createdAt', 'updatedAt'],
    properties: {
      id: str,
      url: str,
      events: { type: 'array', items: str },
      status: { type: 'string', enum: ['active', 'disabled'], description: '`disabled`: by PATCH, or after deliveries failed for too long; PATCH `active` re-enables it.' },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      disabledAt: { type: 'string', format: 'date-time', description: 'When it was disabled (while it is).' },
    },
  },
  UploadResult: {
    type: 'object',
    required: ['id', 'url', 'filename', 'size', 'type'],
    properties: { id: str, url: str, filename: str, size: { type: 'integer' }, type: str },
  },
};

/**
 * The change events webhooks deliver, read from the Events table's stream. The item format is
 * defined with the records write path (shared/data/change-events.ts); `changeEventFromImage` is
 * the one place that reads it, so the format can change there without touching the webhooks.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { LoadedEntity } from '../registry/index.js';

export interface ChangeEvent {
  id: string;
  /** `<entity name>.created|updated|deleted`, e.g. task.created. */
  type: string;
  /** Entity slug. */
  entity: string;
  tenantId: string;
  ownerId?: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/** The event in a stream record's NewImage, or undefined when the item is not a change event. */
export function changeEventFromImage(image: Record<string, AttributeValue> | undefined): ChangeEvent | undefined {
  if (!image) return undefined;
  const item = unmarshall(image as never) as Record<string, unknown>;
  const { id, type, entity, tenantId, ownerId, createdAt, data } = item;
  if (typeof id !== 'string' || typeof type !== 'string' || typeof tenantId !== 'string' || typeof createdAt !== 'string') return undefined;
  return {
    id,
    type,
    entity: typeof entity === 'string' ? entity : type.split('.')[0],
    tenantId,
    ownerId: typeof ownerId === 'string' ? ownerId : undefined,
    createdAt,
    data: data && typeof data === 'object' ? (data as Record<string, unknown>) : {},
  };
}

export const CHANGES = ['created', 'updated', 'deleted'] as const;
export const TEST_EVENT = 'webhook.test';

/** Every event a webhook may subscribe to: `<name>.created|updated|deleted` of each registered entity. */
export function knownEventTypes(entities: Iterable<Pick<LoadedEntity, 'name'>>): Set<string> {
  const types = new Set<string>();
  for (const entity of entities) for (const change of CHANGES) types.add(`${entity.name}.${change}`);
  return types;
}

/** The body a receiver gets: SPEC.md's delivery payload. */
export function payloadOf(event: Pick<ChangeEvent, 'id' | 'type' | 'createdAt' | 'data'>): string {
  return JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt, data: event.data });
}

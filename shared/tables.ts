/**
 * THE table definitions. infra/aws creates them with CDK, infra/local creates them on
 * DynamoDB Local; table names come from the environment (shared/config.ts) in both.
 *
 * Every table has a string partition key `pk` and sort key `sk`; what lives where is described
 * in docs/data-model.md.
 */
import type { Config } from './config.js';

export interface IndexDefinition {
  name: string;
  partitionKey: string;
  sortKey: string;
}

export interface TableDefinition {
  /** Key into config().tables, and the construct id in CDK. */
  id: keyof Config['tables'];
  partitionKey: 'pk';
  sortKey: 'sk';
  /** Attribute holding an expiry in epoch seconds. */
  ttlAttribute?: string;
  /** Change stream of new images (feeds webhooks and the SSE stream). */
  stream?: boolean;
  globalIndexes: IndexDefinition[];
}

export const tables: readonly TableDefinition[] = [
  {
    // Records, their listing copies and counters (layout: shared/data/partitions.ts and the files beside it).
    id: 'records',
    partitionKey: 'pk',
    sortKey: 'sk',
    globalIndexes: [],
  },
  {
    // One item per change, written in the record's transaction; kept 24 hours.
    id: 'events',
    partitionKey: 'pk',
    sortKey: 'sk',
    ttlAttribute: 'expiresAt',
    stream: true,
    globalIndexes: [],
  },
  {
    // Revisions of records, bulk calls kept for their undo, and the trash (shared/data/revisions.ts),
    // written in the records' transactions; each expires with its entity's history retention. No
    // stream: nothing here is a change to deliver.
    id: 'history',
    partitionKey: 'pk',
    sortKey: 'sk',
    ttlAttribute: 'expiresAt',
    globalIndexes: [],
  },
  {
    // Tenants, users, e-mail uniqueness, sessions, API keys, audit entries.
    id: 'identity',
    partitionKey: 'pk',
    sortKey: 'sk',
    ttlAttribute: 'expiresAt',
    // Listings by parent: a tenant's users, a user's keys. gsi1pk names the parent.
    globalIndexes: [{ name: 'byParent', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }],
  },
  {
    // Rate-limit windows and idempotency records, each expiring on its own.
    id: 'limits',
    partitionKey: 'pk',
    sortKey: 'sk',
    ttlAttribute: 'expiresAt',
    globalIndexes: [],
  },
  {
    // Uploaded files: one item per file, a copy per owner listing, a counter per owner, and
    // presigned uploads not completed yet (expiring).
    id: 'uploads',
    partitionKey: 'pk',
    sortKey: 'sk',
    ttlAttribute: 'expiresAt',
    globalIndexes: [],
  },
  {
    // Webhook registrations (per tenant), their deliveries (30 days) and inbound provider events.
    id: 'webhooks',
    partitionKey: 'pk',
    sortKey: 'sk',
    ttlAttribute: 'expiresAt',
    globalIndexes: [],
  },
];

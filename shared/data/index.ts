/**
 * The data area's front door: the DynamoDB client (created once), the identity repository, the
 * records table in its parts (the live layout value; where a record lives; what it is listed and
 * counted under; the items, events and transactions built from those; sending them; the readers),
 * unique values, rate counters, and the per-request usage. Everything else under shared/data/ is
 * the area's own. Narrow entries: usage.ts (the middleware stack loads it at every cold start,
 * without the SDK the client brings), and the pure layout.ts, partitions.ts and listings.ts (the
 * query planner's key building, which the API description loads at cold start).
 */
export { busyDelay, BUSY_ATTEMPTS, whileBusy } from './busy.js';
export { db, tableName } from './client.js';
export {
  createTenant,
  createTenantWithAdmin,
  createUser,
  DEFAULT_TENANT_ID,
  deleteUser,
  DuplicateEmailError,
  emailKey,
  getTenant,
  getUser,
  getUserByEmail,
  listTenantUsers,
  normalizeEmail,
  publicTenant,
  publicUser,
  queryByParent,
  tenantKey,
  updateTenant,
  updateUser,
  userKey,
  type PublicTenant,
  type PublicUser,
  type Tenant,
  type User,
  type UserChanges,
} from './identity.js';
export { consolidatedFields, fewValues, indexedFields, type LiveLayout, type LiveSum } from './layout.js';
export {
  apiKeySubject,
  clearLeases,
  counterKey,
  DAY_SECONDS,
  holdTokens,
  increment,
  keyRequestsLast24h,
  LEASE_SHARE,
  leaseBlock,
  tightest,
  windowStart,
  type CounterSpec,
  type CounterState,
} from './rate-counters.js';
export { type Key, type StoredRecord, type TableItem, type TableNames, type TransactItem } from './record-item.js';
export { dayPartition, detachedKey, heldShards, homeKey, homeShards, isDayPartition, keyShard, keyShardCount, listingSortKey, ownListing, recordKey, recordKeys, shardKeys, uninvertedMs } from './partitions.js';
export { listingPartitionFor, listings, type Listing, type Viewer } from './listings.js';
export { counterUpdates, dayItem, dayItems, decimalSum, heldSums, utcDay, randomShard, recordCounts, reshard, summedValue, sumAttribute, totalSource, writeCounts, type CounterDelta, type TotalSource } from './counters.js';
export { copyItem, fromItem, LAGGING_ATTRIBUTES, storedFromItem, withMaintainedShards } from './items.js';
export { EVENT_TTL_SECONDS, eventItem, eventPartition, type ChangeType } from './change-events.js';
export { changesBetween, claimUndo, readOperation, readRevision, readRevisions, readTrash, revisionPartition, revisionPut, saveOperation, trashDelete, trashPut, writeContextOf, type OperationRecord, type Revision, type TrashEntry, type RevisionOperation, type RevisionState, type StoredRevision, type WriteContext } from './revisions.js';
export { createTransaction, deleteTransaction, newRecordPuts, recordWrite, updateTransaction, versionGuard } from './transactions.js';
export { CONFLICT_ATTEMPTS, conflictBackoff, recordTables, sendTransaction, transact, WriteConflict } from './transact.js';
export { batchGet, batchKey, foundAt, getRecord, MAX_ID_LENGTH, readRecords, recordAmong, type BatchRequest } from './read-records.js';
export { firstPage, pageAfter, queryPartition, readCounter, readCounters, readCounterTotals, readDayCounts, readListingEnds, skipEntries, type CounterTotals, type PartitionPage } from './read-pages.js';
export { queryAll } from './read-all.js';
export { mergeFirst, mergeSorted, type ShardRead, type ShardReader } from './merge.js';
export { buildingAcquisitions, holdsValue, oversizedUniques, uniqueBuildingError, uniqueFields, uniqueItem, uniqueKey, uniqueKeyFits, uniquePutField } from './unique-keys.js';
export { currentUsage, foregroundActivity, withRequestUsage, type ForegroundActivity, type RequestUsage } from './usage.js';

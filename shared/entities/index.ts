/**
 * The entities area's front door: what other areas may use of the entity service (CRUD, child
 * collections, bulk writes), its access rules, and how a record is shown. Everything else under
 * shared/entities/ is the area's own. The rules alone (no service) are also in rules.ts.
 */
export * from './rules.js';
export { aggregateRecords, type AggregateResult } from './aggregate.js';
export { aggregatableFields, aggregateQueryOf, parseAggregateQuery, type AggregateInput, type AggregateGroup, type AggregateQuery } from './aggregate-query.js';
export { bulkDelete, bulkUpdate, type BulkDeleteResult, type BulkFailure, type BulkUpdateResult } from './bulk.js';
export { listDeleted, listRevisions, parseRevisionNumber, parseRevisionsQuery, readRecordAtRevision, restoreRecord, type RevisionsPage } from './history.js';
export { undoOperation, type UndoResult } from './undo.js';
export { childEntity, createChild, listChildren } from './children.js';
export {
  createRecord,
  createRecordWithEtag,
  deleteRecord,
  listRecords,
  readRecord,
  updateRecord,
  updateRecordWithEtag,
  type CreateOptions,
  type ListResult,
  type RecordWithEtag,
  type UpdateOptions,
} from './service.js';
export { listQueryOf, parseListQueryString, parseReadQueryString, type ListInput, type ListQuery, type ReadQuery, type RecordView } from './query.js';

/**
 * A write that sets a new value of a unique field whose uniqueness items a migration is still
 * building (the layout's `uniqueBuilding`): refused before its transaction is built, with the
 * most precise answer the items allow. A value whose item exists is held by a live record (an
 * item is taken and released in the same transaction as its record, and the pass hands it to the
 * oldest holder): 409 UNIQUE_VIOLATION, as after the migration. A value with no item may still be
 * held by a record the pass has not reached: 503 SERVICE_UNAVAILABLE with Retry-After
 * (shared/data/unique-keys.ts uniqueBuildingError). The transaction builders refuse such a write
 * too, so no path takes a value meanwhile; this check only gives the clearer answer. One
 * BatchGetItem, and only then.
 */
import { batchGet, batchKey, buildingAcquisitions, uniqueBuildingError, type LiveLayout, type StoredRecord } from '../data/index.js';
import { UniqueViolationError } from '../errors.js';

export async function refuseWhileUniqueBuilt(layout: LiveLayout, before: StoredRecord | undefined, after: StoredRecord): Promise<void> {
  const wanted = buildingAcquisitions(layout.entity, layout.uniqueBuilding, before, after);
  if (wanted.length === 0) return;
  const found = await batchGet([{ table: 'records', keys: wanted.map((w) => w.key) }]);
  const held = wanted.filter((w) => {
    const item = found.get(batchKey('records', w.key));
    return item !== undefined && item.recordId !== after.id;
  });
  if (held.length) throw new UniqueViolationError(layout.entity.slug, held.map((w) => w.field));
  throw uniqueBuildingError(layout.entity.slug, wanted.map((w) => w.field));
}

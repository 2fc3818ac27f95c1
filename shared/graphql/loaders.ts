/**
 * Per-request batching of related records (DataLoader style): every `load(id)` made while one
 * level of a GraphQL result is resolved is collected, and ONE BatchGetItem (100 keys per call)
 * fetches them all when the event loop turns (setImmediate, after the resolvers of that level
 * have run). Results are cached for the request. Users come from the identity table and are
 * shown as {id, name, email} only to callers of their tenant; entity records come from the
 * records table and only when the caller may see them (row-level security), else null.
 */
import { batchGet, foundAt, fromItem } from '../data/index.js';
import { canSee, present, relatedKeys } from '../entities/index.js';
import type { AuthContext } from '../caller.js';
import type { LiveLayouts } from '../migrations/index.js';
import { findEntity } from '../registry/index.js';

type Related = Record<string, unknown> | null;

export class RelatedLoader {
  private readonly cache = new Map<string, Promise<Related>>();
  private pending: { target: string; id: string; resolve: (value: Related) => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;
  /** BatchGetItem rounds sent (for tests and the bench). */
  batches = 0;

  constructor(
    private readonly auth: AuthContext | undefined,
    private readonly layouts: LiveLayouts,
  ) {}

  /** The related record `id` of `target` ('users' or an entity slug), or null when unknown or not visible. */
  load(target: string, id: string): Promise<Related> {
    const cacheKey = `${target}|${id}`;
    let promise = this.cache.get(cacheKey);
    if (!promise) {
      promise = new Promise<Related>((resolve, reject) => this.pending.push({ target, id, resolve, reject }));
      this.cache.set(cacheKey, promise);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    }
    return promise;
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const keyed = batch.map((p) => ({ ...p, k: relatedKeys(this.layouts, p.target, p.id, this.auth?.tenantId) }));
    try {
      const requests = keyed.filter((p) => p.k).map((p) => ({ table: p.k!.table, keys: p.k!.keys }));
      this.batches += 1;
      const found = requests.length ? await batchGet(requests) : new Map<string, Record<string, unknown>>();
      for (const p of keyed) {
        const item = p.k ? foundAt(found, p.k.table, p.k.keys, p.target) : undefined;
        p.resolve(item ? this.shown(p.target, item) : null);
      }
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  }

  private shown(target: string, item: Record<string, unknown>): Related {
    if (target === 'users') {
      if (!this.auth || item.tenantId !== this.auth.tenantId) return null;
      return { id: item.id, name: item.name ?? null, email: item.email ?? null };
    }
    const entity = findEntity(target)!;
    const record = fromItem(this.layouts.of(entity), item);
    return canSee(entity, record, this.auth) ? present(entity, record) : null;
  }
}

/**
 * Names instead of ids: a reference (`assigneeId`, `customerId`) or a relation's id list (`tagIds`)
 * is shown by its record's label, the first text field as the pickers show it (`name`, `title`,
 * `email`, else the first other text). Labels cost no request of their own where the entity
 * declares the relation: the explorer's LIST embeds the related records (`include`). The others
 * (a reference without a relation, rows that arrived live) are looked up in batches: one LIST
 * with `ids` per related entity, only for ids not seen yet. Users are looked up by admins only
 * (`GET /api/v1/users`, once); others see them through the embedded relation.
 */
import type { EntityDescription } from './form.js';

export interface Reference {
  /** The column holding the id (or the list of ids). */
  column: string;
  /** The entity the ids belong to (`users` for users). */
  entity: string;
  /** The relation that embeds the records in a LIST, when the entity declares one. */
  relation?: string;
  many: boolean;
}

/** The columns of an entity that hold ids of other records, and how to label them. */
export function referencesOf(description: EntityDescription): Reference[] {
  const out = new Map<string, Reference>();
  for (const [name, relation] of Object.entries(description.relations)) {
    if (relation.type !== 'belongsTo' && relation.type !== 'manyToMany') continue;
    if (!(relation.foreignKey in description.schema)) continue;
    out.set(relation.foreignKey, { column: relation.foreignKey, entity: relation.entity, relation: name, many: relation.type === 'manyToMany' });
  }
  for (const [name, field] of Object.entries(description.schema)) {
    if (field.references && !out.has(name)) out.set(name, { column: name, entity: field.references, many: field.type === 'array' });
  }
  return [...out.values()];
}

/** The LIST's `include`: the relations that embed the referenced records. */
export function includeOf(references: Reference[]): string | undefined {
  const names = references.filter((r) => r.relation).map((r) => r.relation!);
  return names.length ? names.join(',') : undefined;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T/;

/** A record's label: name, title or email, else its first other text that is not an id or a time. */
export function labelOf(record: Record<string, unknown>): string | undefined {
  for (const key of ['name', 'title', 'email']) if (typeof record[key] === 'string' && record[key]) return record[key] as string;
  for (const [key, value] of Object.entries(record)) {
    if (typeof value !== 'string' || !value || key === 'id' || /Id$/.test(key) || TIMESTAMP.test(value)) continue;
    return value;
  }
  return undefined;
}

/** Labels known so far, per entity and id; null: looked up, not visible to the caller. */
export class LabelBook {
  private readonly known = new Map<string, Map<string, string | null>>();

  private of(entity: string): Map<string, string | null> {
    let map = this.known.get(entity);
    if (!map) this.known.set(entity, (map = new Map()));
    return map;
  }

  learn(entity: string, records: Iterable<Record<string, unknown>>): void {
    const map = this.of(entity);
    for (const r of records) if (typeof r?.id === 'string') map.set(r.id, labelOf(r) ?? r.id);
  }

  /** Ids looked up that the caller may not see: not asked for again. */
  forget(entity: string, ids: Iterable<string>): void {
    const map = this.of(entity);
    for (const id of ids) if (!map.has(id)) map.set(id, null);
  }

  label(entity: string, id: string): string | undefined {
    return this.known.get(entity)?.get(id) ?? undefined;
  }

  has(entity: string, id: string): boolean {
    return this.known.get(entity)?.has(id) ?? false;
  }

  /** The records a LIST embedded (`include`), learnt under their entity. */
  learnEmbedded(references: Reference[], rows: Record<string, unknown>[]): void {
    for (const ref of references) {
      if (!ref.relation) continue;
      const embedded = rows.flatMap((row) => {
        const value = row[ref.relation!];
        return Array.isArray(value) ? value : value && typeof value === 'object' ? [value] : [];
      });
      this.learn(ref.entity, embedded as Record<string, unknown>[]);
    }
  }

  /** The ids of `rows` with no label yet, per related entity (what a batched look-up asks for). */
  missing(references: Reference[], rows: Record<string, unknown>[]): Map<string, string[]> {
    const out = new Map<string, Set<string>>();
    for (const ref of references) {
      for (const row of rows) {
        const value = row[ref.column];
        const ids = Array.isArray(value) ? value : typeof value === 'string' && value ? [value] : [];
        for (const id of ids) {
          if (typeof id !== 'string' || this.has(ref.entity, id)) continue;
          if (!out.has(ref.entity)) out.set(ref.entity, new Set());
          out.get(ref.entity)!.add(id);
        }
      }
    }
    return new Map([...out].map(([entity, ids]) => [entity, [...ids]]));
  }
}

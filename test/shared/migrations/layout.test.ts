import { describe, expect, it } from 'vitest';
import { accessChanged, adoptedTarget, layoutChanges, layoutHash, layoutOf, needsPass, nextTarget, readdedWhilePurging } from '../../../shared/migrations/layout.js';
import { ruleViolations } from '../../../shared/migrations/rules.js';
import { validateDefinition } from '../../../shared/registry/index.js';

function entity(fields: Record<string, unknown>) {
  return validateDefinition(
    { name: 'invoice', slug: 'invoices', tableName: 'invoices', idFormat: { type: 'prefixed', prefix: 'inv' }, fields, access: { public: false, shared: false } },
    'test',
  );
}

const v1 = { number: { type: 'string', required: true }, status: { type: 'enum', values: ['draft', 'paid'], indexed: true }, notes: { type: 'string' } };

describe('layoutOf', () => {
  it('gives equal definitions one hash and a changed index another', () => {
    const same = layoutHash(layoutOf(entity(v1)));
    const indexed = layoutHash(layoutOf(entity({ ...v1, number: { ...v1.number, indexed: true } })));

    expect(layoutHash(layoutOf(entity(v1)))).toBe(same);
    expect(indexed).not.toBe(same);
  });

  it('names each change in words', () => {
    const before = layoutOf(entity(v1));
    const { notes: _notes, ...rest } = v1;
    const after = layoutOf(entity({ ...rest, status: { ...v1.status, indexed: false }, archived: { type: 'boolean', default: false }, number: { ...v1.number, unique: true } }));

    expect(layoutChanges(before, after)).toEqual(
      expect.arrayContaining(['index dropped: status', 'unique added: number', 'default of archived: false', 'field added: archived', 'field removed: notes']),
    );
  });

  it('needs no pass over the records when only searchable fields change', () => {
    const before = layoutOf(entity(v1));
    const after = layoutOf(entity({ ...v1, notes: { type: 'string', searchable: true } }));

    expect(needsPass(before, after)).toBe(false);
    expect(needsPass(before, layoutOf(entity({ ...v1, notes: { type: 'string', maxLength: 5 } })))).toBe(true);
  });
});

describe('nextTarget', () => {
  it('keeps an unchanged index complete under its name, and builds a new one as a new generation', () => {
    const adopted = adoptedTarget(layoutOf(entity(v1)));
    const next = nextTarget(adopted, layoutOf(entity({ ...v1, number: { ...v1.number, indexed: true } })));

    expect(next.indexes).toEqual([
      expect.objectContaining({ field: 'number', token: 'number@1', ready: false }),
      expect.objectContaining({ field: 'status', token: 'status', ready: true }),
    ]);
    expect(next.legacy).toEqual(['status']);
  });

  it('makes a dropped index obsolete and gives it a fresh generation when it comes back, never its old partitions', () => {
    const adopted = adoptedTarget(layoutOf(entity(v1)));
    const dropped = nextTarget(adopted, layoutOf(entity({ ...v1, status: { ...v1.status, indexed: false } })));
    const back = nextTarget(dropped, layoutOf(entity(v1)));

    expect(dropped.indexes).toEqual([]);
    expect(dropped.obsolete.map((i) => i.token)).toEqual(['status']);
    expect(back.indexes).toEqual([expect.objectContaining({ field: 'status', token: 'status@1', ready: false })]);
    expect(back.obsolete.map((i) => i.token)).toEqual(['status']);
  });

  it('rebuilds an index whose default changes (records without a value are listed under it)', () => {
    const adopted = adoptedTarget(layoutOf(entity(v1)));
    const next = nextTarget(adopted, layoutOf(entity({ ...v1, status: { ...v1.status, default: 'draft' } })));

    expect(next.indexes).toEqual([expect.objectContaining({ field: 'status', token: 'status@1', default: 'draft' })]);
    expect(next.obsolete.map((i) => i.token)).toEqual(['status']);
  });
});

describe('purging', () => {
  it('keeps a removed field purging through later targets, and names it when it is added again', () => {
    const adopted = adoptedTarget(layoutOf(entity(v1)));
    const { notes: _notes, ...withoutNotes } = v1;
    const removed = nextTarget(adopted, layoutOf(entity(withoutNotes)));
    const later = nextTarget(removed, layoutOf(entity({ ...withoutNotes, number: { ...v1.number, indexed: true } })));

    expect(removed.purging).toEqual(['notes']);
    expect(later.purging).toEqual(['notes']);
    expect(readdedWhilePurging(later, layoutOf(entity(v1)))).toEqual(['notes']);
    expect(readdedWhilePurging(later, layoutOf(entity(withoutNotes)))).toEqual([]);
  });

  it('has nothing purging once the migration finished (its target is emptied), so the field may come back', () => {
    const { notes: _notes, ...withoutNotes } = v1;
    const removed = nextTarget(adoptedTarget(layoutOf(entity(v1))), layoutOf(entity(withoutNotes)));
    const done = { ...removed, purging: [] };

    expect(readdedWhilePurging(done, layoutOf(entity(v1)))).toEqual([]);
    expect(nextTarget(done, layoutOf(entity(v1))).purging).toBeUndefined();
  });
});

describe('accessChanged', () => {
  it('tells a change of public or shared', () => {
    const base = layoutOf(entity(v1));

    expect(accessChanged(base, { access: { public: false, shared: false } })).toBe(false);
    expect(accessChanged(base, { access: { public: false, shared: true } })).toBe(true);
    expect(accessChanged(base, { access: { public: true, shared: false } })).toBe(true);
  });
});

describe('ruleViolations', () => {
  it('names each field a record breaks, and leaves a missing required value with a default alone', () => {
    const rules = { a: { type: 'string', maxLength: 3 }, b: { type: 'enum', values: ['x'] }, c: { type: 'string', required: true }, d: { type: 'number', min: 0 }, e: { type: 'string', required: true } };

    expect(ruleViolations(rules, { e: 'z' }, { a: 'long', b: 'y', d: -1 })).toEqual({
      a: 'must be at most 3 characters',
      b: 'must be one of x',
      c: 'is required',
      d: 'must be at least 0',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { accessChanged, adoptedTarget, layoutChanges, layoutHash, layoutOf, needsPass, nextTarget, readdedWhilePurging } from '../../../shared/migrations/layout.js';
import { ruleViolations } from '../../../shared/migrations/rules.js';
import { finishedRun, startedTarget } from '../../../shared/migrations/runner.js';
import { eventShardsOf, layoutOfState } from '../../../shared/migrations/live-layouts.js';
import { validateDefinition } from '../../../shared/registry/index.js';

function entity(fields: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return validateDefinition(
    { name: 'invoice', slug: 'invoices', tableName: 'invoices', idFormat: { type: 'prefixed', prefix: 'inv' }, fields, access: { public: false, shared: false }, ...extra },
    'test',
  );
}

const v1 = { number: { type: 'string', required: true }, status: { type: 'enum', values: ['draft', 'paid'], indexed: true }, notes: { type: 'string' } };


/** The day counts of createdAt every entity keeps unless its definition says otherwise (adopted with the layout: ready). */
const CREATED_DAYS = { field: 'createdAt', by: 'day', token: 'createdAt', ready: true };

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

describe('write shards', () => {
  const poster = (writeShards?: number | 'auto') =>
    validateDefinition(
      { name: 'poster', slug: 'posters', tableName: 'posters', idFormat: { type: 'uuid' }, fields: { title: { type: 'string' } }, access: { public: true, shared: true }, ...(writeShards ? { writeShards } : {}) },
      'test',
    );

  it('records an auto entity, public or private, at the count recorded (1 when first seen), a pinned one at its number, and an unsharded layout as before', () => {
    expect(layoutOf(poster())).not.toHaveProperty('writeShards');
    expect(layoutOf(poster('auto'), 8).writeShards).toBe(8);
    expect(layoutOf(poster(4), 8).writeShards).toBe(4);
    expect(layoutOf(entity(v1))).not.toHaveProperty('writeShards');
    expect(layoutOf(entity(v1), 8).writeShards).toBe(8);
    expect(layoutOf(entity(v1, { writeShards: 2 }), 8).writeShards).toBe(2);
  });

  it('keeps the shards readers read maintained while the new ones are built, and retires one never read', () => {
    const adopted = adoptedTarget(layoutOf(poster(1)));
    const building = nextTarget(adopted, layoutOf(poster(4)));
    const redirected = nextTarget(building, layoutOf(poster(8)));

    expect(building).toMatchObject({ keptShards: 1 });
    expect(building.shardsReady).toBeUndefined();
    expect(redirected).toMatchObject({ keptShards: 1, retiredShards: [4] });
    expect(layoutChanges(adopted.layout, building.layout)).toContain('writeShards changed from 1 to 4');
  });

  it('switches readers once the pass is done, queues the purge, retires the earlier shards when it starts, and keeps their events readable for a day', () => {
    const building = nextTarget(adoptedTarget(layoutOf(poster(1))), layoutOf(poster(4)));
    const state = { entity: 'posters', target: building, changes: [], state: 'running' as const, run: 1, segments: [{ done: true }], processed: 3, total: 3, revision: 5 };
    const now = Date.parse('2026-11-27T10:00:00.000Z');

    const switched = finishedRun(state, now, 2000);
    const purging = startedTarget(switched.target);
    const done = finishedRun({ ...switched, target: purging, state: 'running' }, now + 60_000);

    expect(switched).toMatchObject({ state: 'pending', run: 2, target: { keptShards: 1, shardsReady: true, notBefore: '2026-11-27T10:00:02.000Z' } });
    expect(purging).toMatchObject({ retiredShards: [1] });
    expect(purging.keptShards).toBeUndefined();
    expect(done.state).toBe('done');
    expect(done.target.retiredShards).toBeUndefined();
    expect(done.target.eventsRetired).toEqual([{ shards: 1, until: '2026-11-28T10:01:00.000Z' }]);
    expect(eventShardsOf(done.target, now + 120_000)).toEqual([4, 1]);
    expect(eventShardsOf(done.target, now + 2 * 86_400_000)).toEqual([4]);
  });
});

describe('uniqueness being built', () => {
  const unique = { ...v1, number: { ...v1.number, unique: true } };

  it('builds a field made unique until the pass finishes, through later targets, and never one unique before', () => {
    const adopted = adoptedTarget(layoutOf(entity(v1)));
    const made = nextTarget(adopted, layoutOf(entity(unique)));
    const later = nextTarget(made, layoutOf(entity({ ...unique, notes: { type: 'string', unique: true } })));
    const state = { entity: 'invoices', target: later, changes: [], state: 'running' as const, run: 2, segments: [{ done: true }], processed: 3, total: 3, revision: 5 };

    const done = finishedRun(state, Date.parse('2026-11-27T10:00:00.000Z'));

    expect(adoptedTarget(layoutOf(entity(unique))).uniqueBuilding).toBeUndefined();
    expect(made.uniqueBuilding).toEqual(['number']);
    expect(later.uniqueBuilding).toEqual(['notes', 'number']);
    expect(done.target.uniqueBuilding).toBeUndefined();
    expect(nextTarget(done.target, layoutOf(entity(unique))).uniqueBuilding).toBeUndefined();
  });

  it('serves a unique field as being built while the pass runs, and one the recorded target does not hold unique yet', () => {
    const adopted = adoptedTarget(layoutOf(entity(v1)));
    const made = nextTarget(adopted, layoutOf(entity(unique)));
    const running = { entity: 'invoices', target: made, changes: [], state: 'running' as const, run: 1, segments: [{ done: false }], processed: 0, revision: 2 };
    const done = finishedRun({ ...running, segments: [{ done: true }] }, Date.now());

    expect([...layoutOfState(running, entity(unique)).uniqueBuilding]).toEqual(['number']);
    expect([...layoutOfState(done, entity(unique)).uniqueBuilding]).toEqual([]);
    // A definition newer than the recorded target (before its start records it): no item was taken for it.
    expect([...layoutOfState({ ...running, target: adopted, state: 'done' }, entity(unique)).uniqueBuilding]).toEqual(['number']);
  });

  it('builds a summed field as a new generation read only once the pass is done, keeps it through later targets, and never reuses a dropped one', () => {
    const fields = { ...v1, amount: { type: 'number' } };
    const summing = { aggregates: { sum: ['amount'] } };
    const adopted = adoptedTarget(layoutOf(entity(fields)));
    const added = nextTarget(adopted, layoutOf(entity(fields, summing)));
    const running = { entity: 'invoices', target: added, changes: [], state: 'running' as const, run: 1, segments: [{ done: false }], processed: 0, revision: 2 };
    const done = finishedRun({ ...running, segments: [{ done: true }] }, Date.now());
    const dropped = nextTarget(done.target, layoutOf(entity(fields)));
    const back = nextTarget(dropped, layoutOf(entity(fields, summing)));

    expect(layoutHash(layoutOf(entity(fields)))).toBe(layoutHash(layoutOf(entity({ ...fields }))));
    expect(needsPass(adopted.layout, added.layout)).toBe(true);
    expect(layoutChanges(adopted.layout, added.layout)).toEqual(['sum added: amount']);
    expect(added.sums).toEqual([{ field: 'amount', token: 'amount@1', ready: false }, CREATED_DAYS]);
    expect(layoutOfState(running, entity(fields, summing)).readableSums.size).toBe(0);
    expect(layoutOfState(running, entity(fields, summing)).sumTokens).toEqual(['amount@1', 'createdAt']);
    expect([...layoutOfState(done, entity(fields, summing)).readableSums]).toEqual([['amount', 'amount@1']]);
    expect(nextTarget(done.target, layoutOf(entity(fields, summing))).sums).toEqual([{ field: 'amount', token: 'amount@1', ready: true }, CREATED_DAYS]);
    expect(layoutChanges(done.target.layout, dropped.layout)).toEqual(['sum dropped: amount']);
    expect(dropped.sums).toEqual([CREATED_DAYS]);
    expect(dropped.droppedSums).toEqual(['amount@1']);
    expect(finishedRun({ ...running, target: dropped, segments: [{ done: true }] }, Date.now()).target.droppedSums).toBeUndefined();
    expect(back.sums).toEqual([{ field: 'amount', token: 'amount@2', ready: false }, CREATED_DAYS]);
    expect(adoptedTarget(layoutOf(entity(fields, summing))).sums).toEqual([{ field: 'amount', token: 'amount', ready: true }, CREATED_DAYS]);
  });

  it('rebuilds a sum whose field gets a default (records stored before read as it)', () => {
    const fields = { ...v1, amount: { type: 'number' } };
    const adopted = adoptedTarget(layoutOf(entity(fields, { aggregates: { sum: ['amount'] } })));

    const next = nextTarget(adopted, layoutOf(entity({ ...fields, amount: { type: 'number', default: 1 } }, { aggregates: { sum: ['amount'] } })));

    expect(next.sums).toEqual([{ field: 'amount', default: 1, token: 'amount@1', ready: false }, CREATED_DAYS]);
  });

  it('counts createdAt per day unless told otherwise; a date field counted per day is built, dropped and named like a sum', () => {
    const fields = { ...v1, dueOn: { type: 'date' } };
    const adopted = adoptedTarget(layoutOf(entity(fields)));
    const added = nextTarget(adopted, layoutOf(entity(fields, { aggregates: { days: ['createdAt', 'dueOn'] } })));
    const none = nextTarget(added, layoutOf(entity(fields, { aggregates: { days: [] } })));

    expect(adopted.sums).toEqual([CREATED_DAYS]);
    expect(layoutChanges(adopted.layout, added.layout)).toEqual(['day counts added: dueOn']);
    expect(added.sums).toEqual([CREATED_DAYS, { field: 'dueOn', by: 'day', token: 'dueOn@1', ready: false }]);
    expect(layoutChanges(added.layout, none.layout)).toEqual(['day counts dropped: createdAt', 'day counts dropped: dueOn']);
    expect(none.droppedSums).toEqual(['createdAt', 'dueOn@1']);
    const running = { entity: 'invoices', target: added, changes: [], state: 'running' as const, run: 1, segments: [{ done: false }], processed: 0, revision: 2 };
    expect([...layoutOfState(running, entity(fields, { aggregates: { days: ['createdAt', 'dueOn'] } })).readableDays]).toEqual([['createdAt', 'createdAt']]);
  });
});

import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../shared/errors.js';
import { equalityFromText, matchesAll, matchesSearch, parseFilter, searchWords } from '../../../shared/query/filter.js';
import { tasks } from './support.js';

function filterError(run: () => unknown): BadRequestError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).code).toBe('INVALID_FILTER');
    expect((error as BadRequestError).details).toHaveProperty('filter');
    return error as BadRequestError;
  }
  throw new Error('expected INVALID_FILTER');
}

const record = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ id: 'tsk_1', createdAt: '2026-01-02T03:04:05.000Z', data, ...extra });

describe('parseFilter', () => {
  it('turns plain values into $eq and operator objects into one condition per operator', () => {
    const conditions = parseFilter(tasks, JSON.stringify({ status: 'todo', estimate: { $gte: 2, $lt: 5 } }));

    expect(conditions.map((c) => [c.field.name, c.op, c.value])).toEqual([
      ['status', '$eq', 'todo'],
      ['estimate', '$gte', 2],
      ['estimate', '$lt', 5],
    ]);
  });

  it('resolves dotted metadata paths', () => {
    const [c] = parseFilter(tasks, JSON.stringify({ 'metadata.workflow.currentStage': 'review' }));

    expect(c.field.path).toEqual(['metadata', 'workflow', 'currentStage']);
  });

  it('normalises datetime operands to UTC', () => {
    const [c] = parseFilter(tasks, JSON.stringify({ createdAt: { $gte: '2026-01-02T05:00:00+02:00' } }));

    expect(c.value).toBe('2026-01-02T03:00:00.000Z');
  });

  it('maps $eq null and $ne null to $null', () => {
    const [a, b] = parseFilter(tasks, JSON.stringify({ assigneeId: null, title: { $ne: null } }));

    expect([a.op, a.value, b.op, b.value]).toEqual(['$null', true, '$null', false]);
  });

  it.each([
    ['not JSON', '{status'],
    ['an array', '[1]'],
    ['a string', '"todo"'],
    ['an unknown operator', '{"status":{"$like":"t"}}'],
    ['a top-level operator', '{"$or":[]}'],
    ['an unknown field', '{"colour":"red"}'],
    ['a protected field', '{"secretKey":"x"}'],
    ['a string for a number', '{"estimate":{"$gt":"2"}}'],
    ['a number for a string', '{"title":5}'],
    ['a non-array $in', '{"status":{"$in":"todo"}}'],
    ['a non-boolean $null', '{"status":{"$null":1}}'],
    ['$contains on a number', '{"estimate":{"$contains":"1"}}'],
    ['a bad date', '{"createdAt":{"$gt":"yesterday"}}'],
    ['an empty operator object', '{"status":{}}'],
  ])('refuses %s with 400 INVALID_FILTER', (_label, raw) => {
    filterError(() => parseFilter(tasks, raw));
  });
});

describe('equalityFromText', () => {
  it('converts to the field type', () => {
    expect(equalityFromText(tasks, 'estimate', '3').value).toBe(3);
    expect(equalityFromText(tasks, 'done', 'true').value).toBe(true);
    filterError(() => equalityFromText(tasks, 'estimate', 'three'));
  });

  it('matches a metadata path as text, or as the number or boolean the text spells', () => {
    const c = equalityFromText(tasks, 'metadata.score', '5');

    expect([c.op, c.value]).toEqual(['$in', ['5', 5]]);
    expect(matchesAll(record({}, { metadata: { score: 5 } }), [c])).toBe(true);
    expect(equalityFromText(tasks, 'metadata.flag', 'true').value).toEqual(['true', true]);
    expect(equalityFromText(tasks, 'metadata.stage', 'review')).toMatchObject({ op: '$eq', value: 'review' });
  });
});

describe('matchesAll', () => {
  const r = record({ title: 'Write Report', status: 'todo', estimate: 3 }, { metadata: { workflow: { stage: 'review' } } });
  const check = (filter: object) => matchesAll(r, parseFilter(tasks, JSON.stringify(filter)));

  it.each([
    [{ status: 'todo' }, true],
    [{ status: { $ne: 'todo' } }, false],
    [{ estimate: { $gt: 2, $lte: 3 } }, true],
    [{ estimate: { $lt: 3 } }, false],
    [{ status: { $in: ['todo', 'completed'] } }, true],
    [{ status: { $nin: ['todo'] } }, false],
    [{ title: { $contains: 'REPORT' } }, true],
    [{ title: { $startsWith: 'Write' } }, true],
    [{ title: { $startsWith: 'write' } }, false],
    [{ title: { $endsWith: 'Report' } }, true],
    [{ assigneeId: { $null: true } }, true],
    [{ assigneeId: { $ne: 'x' } }, true],
    [{ 'metadata.workflow.stage': 'review' }, true],
    [{ 'metadata.workflow.missing': { $null: true } }, true],
  ])('%j → %s', (filter, expected) => {
    expect(check(filter)).toBe(expected);
  });
});

describe('search', () => {
  it('lower-cases and de-duplicates words; every word must appear in some searchable field', () => {
    expect(searchWords('  Alpha beta ALPHA ')).toEqual(['alpha', 'beta']);
    expect(matchesSearch({ title: 'Alpha one', description: 'the BETA' }, ['title', 'description'], ['alpha', 'beta'])).toBe(true);
    expect(matchesSearch({ title: 'Alpha one' }, ['title', 'description'], ['alpha', 'beta'])).toBe(false);
  });
});

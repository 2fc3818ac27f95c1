import { describe, expect, it } from 'vitest';
import { createdDuringPass } from '../../../shared/migrations/runner.js';
import { progressCounts } from '../../../shared/migrations/status.js';

describe('createdDuringPass', () => {
  const state = { startedAt: '2026-01-01T10:00:00.000Z', totalAt: '2026-01-01T10:00:05.000Z' };

  it('counts a record created once the count began apart, and one created before it in the total', () => {
    const during = createdDuringPass(state, { createdAt: '2026-01-01T10:00:05.000Z' });
    const before = createdDuringPass(state, { createdAt: '2026-01-01T10:00:04.999Z' });

    expect(during).toBe(true);
    expect(before).toBe(false);
  });

  it('takes the start of the run when the count has no time of its own (a state written before it had one)', () => {
    const during = createdDuringPass({ startedAt: state.startedAt }, { createdAt: '2026-01-01T10:00:01.000Z' });

    expect(during).toBe(true);
  });
});

describe('progressCounts', () => {
  it('shows processed of the total and the records created during the pass apart', () => {
    const counts = progressCounts({ processed: 400, total: 440, added: 269 });

    expect(counts).toEqual({ processed: 400, total: 440, added: 269 });
  });

  it('never shows processed above the total: records met beyond it were not counted, so they are added', () => {
    const counts = progressCounts({ processed: 443, total: 440, added: 266 });

    expect(counts).toEqual({ processed: 440, total: 440, added: 269 });
  });

  it('shows no total while the records are being counted, and no records added before any were met', () => {
    const counts = progressCounts({ processed: 0, total: undefined, added: undefined });

    expect(counts).toEqual({ processed: 0, total: null, added: 0 });
  });
});

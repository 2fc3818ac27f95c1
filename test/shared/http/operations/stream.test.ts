import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../shared/errors.js';
import { END_MARGIN_MS, streamDuration, streamStart } from '../../../../shared/http/operations/stream.js';

const now = Date.parse('2026-06-01T12:00:00.000Z');

describe('where a stream starts and how long it runs', () => {
  it('starts now without Last-Event-ID, after it with one (header first, then the lastEventId query parameter)', () => {
    expect(streamStart({ headers: {}, query: {} }, now)).toEqual({ start: new Date(now).toISOString(), reset: false, resumed: false });
    expect(streamStart({ headers: { 'last-event-id': '2026-06-01T11:00:00.000Z#a' }, query: { lastEventId: '2026-06-01T10:00:00.000Z#b' } }, now)).toEqual({ start: '2026-06-01T11:00:00.000Z#a', reset: false, resumed: true });
    expect(streamStart({ headers: {}, query: { lastEventId: '2026-06-01T10:00:00.000Z#b' } }, now)).toEqual({ start: '2026-06-01T10:00:00.000Z#b', reset: false, resumed: true });
  });

  it('resets from now for an id older than the retention, and refuses ids it never sent with 400', () => {
    expect(streamStart({ headers: { 'last-event-id': '2026-05-01T00:00:00.000Z#a' }, query: {} }, now)).toMatchObject({ reset: true });
    for (const bad of ['abc', '2026-06-01T12:00:00Z', '2026-06-02T12:00:00.000Z#far-future']) {
      expect(() => streamStart({ headers: { 'last-event-id': bad }, query: {} }, now)).toThrow(ApiError);
    }
  });

  it('ends before the function times out', () => {
    expect(streamDuration(840_000, { getRemainingTimeInMillis: () => 900_000 })).toBe(840_000);
    expect(streamDuration(840_000, { getRemainingTimeInMillis: () => 60_000 })).toBe(60_000 - END_MARGIN_MS);
    expect(streamDuration(840_000, undefined)).toBe(840_000);
  });
});

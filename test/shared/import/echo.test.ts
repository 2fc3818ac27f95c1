/** What an import's report echoes of an invalid item (shared/import/service.ts echoOf). */
import { describe, expect, it } from 'vitest';
import { echoOf, MAX_ECHO_CHARS } from '../../../shared/import/service.js';

describe('echoOf', () => {
  it('echoes a small item whole', () => {
    const item = { title: 'T', x: { y: [1, 2] } };

    expect(echoOf(item)).toEqual(item);
  });

  it('keeps the top-level keys of a large item and replaces its large values by their size', () => {
    const item = { title: 'T', x: 'v'.repeat(50_000) };

    const echo = echoOf(item) as Record<string, unknown>;

    expect(echo.title).toBe('T');
    expect(echo.x).toBe('(50002 characters of JSON omitted)');
    expect(JSON.stringify(echo).length).toBeLessThan(MAX_ECHO_CHARS);
  });

  it('bounds an item with many keys and a long key', () => {
    const item = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`${'k'.repeat(i === 0 ? 10_000 : 1)}${i}`, i]));

    const echo = echoOf(item);

    expect(JSON.stringify(echo).length).toBeLessThan(MAX_ECHO_CHARS * 2);
  });

  it('replaces a large value that is not an object by its size', () => {
    expect(echoOf('s'.repeat(10_000))).toBe('(10002 characters of JSON omitted)');
  });
});

import { describe, expect, it } from 'vitest';
import { cleanMetadata, mergeMetadataPatch, mergeSources, metadataView, parseMetadataOptions } from '../../../shared/entities/metadata.js';
import type { StoredRecord } from '../../../shared/data/record-item.js';

describe('metadata writes', () => {
  it('merges patches deeply; null removes a key; unsafe keys are dropped at any depth', () => {
    const current = { a: { b: 1, c: 2 }, d: 'x' };
    const patch = JSON.parse('{"a":{"c":null,"e":3,"__proto__":{"p":1}},"d":null,"f":{"constructor":1,"g":null,"h":1}}');

    expect(mergeMetadataPatch(current, patch)).toEqual({ a: { b: 1, e: 3 }, f: { h: 1 } });
  });

  it('cleans a replacement', () => {
    expect(cleanMetadata(JSON.parse('{"a":null,"b":{"constructor":{},"c":1}}'))).toEqual({ b: { c: 1 } });
  });
});

describe('merged views', () => {
  const sources = [{ theme: { color: 'red', size: 's' }, lang: 'en' }, { theme: { color: 'blue' } }, { lang: 'fr' }, { theme: { size: 'l' } }];

  it('deep: nested objects merged key by key, later sources win', () => {
    expect(mergeSources(sources, 'deep')).toEqual({ theme: { color: 'blue', size: 'l' }, lang: 'fr' });
  });

  it('shallow: a later top-level key replaces the whole value', () => {
    expect(mergeSources(sources, 'shallow')).toEqual({ theme: { size: 'l' }, lang: 'fr' });
  });

  it('shows metadata only when asked, narrowed by metadataFields', () => {
    const record = { metadata: { a: 1, b: 2 } } as unknown as StoredRecord;

    expect(metadataView(record, parseMetadataOptions({}))).toBeUndefined();
    expect(metadataView(record, parseMetadataOptions({ includeMetadata: 'true' }))).toEqual({ a: 1, b: 2 });
    expect(metadataView(record, parseMetadataOptions({ metadataFields: 'b' }))).toEqual({ b: 2 });
    expect(metadataView(record, parseMetadataOptions({ mergeMetadata: 'true' }), { defaults: { z: 0 }, tenant: { a: 0 }, user: {} })).toEqual({ z: 0, a: 1, b: 2 });
    expect(() => parseMetadataOptions({ mergeStrategy: 'sideways' })).toThrow();
  });
});

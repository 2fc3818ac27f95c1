/** JSON bodies: the depth limit is measured on the text, without recursion (shared/http/json-body.ts). */
import { describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH, parseJsonObject } from '../../../shared/http/json-body.js';

describe('jsonDepth', () => {
  it('counts objects and arrays, not brackets inside strings or escaped quotes', () => {
    expect(jsonDepth('1')).toBe(0);
    expect(jsonDepth('{}')).toBe(1);
    expect(jsonDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(jsonDepth('{"a":"[[[{{{","b":"\\"[[["}')).toBe(1);
    expect(jsonDepth('[[],[],[[]]]')).toBe(3);
  });

  it('stops counting past the limit, so a huge body costs one pass at most', () => {
    expect(jsonDepth('['.repeat(1_000_000), 64)).toBe(65);
  });
});

describe('parseJsonObject', () => {
  it(`accepts a body nested ${MAX_JSON_DEPTH} levels`, () => {
    expect(() => parseJsonObject(`{"x":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`)).not.toThrow();
  });

  it('refuses a deeper body with 400 INVALID_REQUEST naming the limit', () => {
    const text = `{"x":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`;

    const refuse = () => parseJsonObject(text);

    expect(refuse).toThrow(expect.objectContaining({ status: 400, code: 'INVALID_REQUEST', details: { body: `must not nest more than ${MAX_JSON_DEPTH} levels` } }));
  });

  it('refuses 100,000 levels without overflowing the stack', () => {
    const text = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;

    expect(() => parseJsonObject(text)).toThrow(expect.objectContaining({ status: 400 }));
  });
});

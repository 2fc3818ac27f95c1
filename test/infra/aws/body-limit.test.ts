/** The WAF body-limit rules' building blocks (infra/aws/body-limit.ts), checked without synthesis. */
import { describe, expect, it } from 'vitest';
import { BINARY_TYPE_PATTERN, bodyLimitRules, greaterThanPattern, payloadTooLargeBody, WAF_REGEX_MAX_LENGTH } from '../../../infra/aws/body-limit.js';
import { BODY_TOO_LARGE_MESSAGE, MAX_BINARY_BODY_BYTES, MAX_TEXT_BODY_BYTES } from '../../../shared/body-limits.js';
import { PayloadTooLargeError } from '../../../shared/errors.js';

// A small deterministic generator, so that a failure names the values it failed on.
function* randomIntegers(seed: number, count: number, max: number): Generator<number> {
  let state = seed;
  for (let i = 0; i < count; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    yield Math.floor((state / 2 ** 31) * max);
  }
}

describe('greaterThanPattern', () => {
  it.each([0, 9, 10, 99, 100, 4_669_440, 6_225_920, 10_485_760, 123_456_789])('matches exactly the integers above %i', (limit) => {
    const pattern = new RegExp(greaterThanPattern(limit));
    const candidates = new Set<number>([0, 1, limit - 1, limit, limit + 1, limit * 10, limit + 1000, 10 ** String(limit).length, 10 ** String(limit).length - 1]);
    for (const n of randomIntegers(limit + 7, 3000, limit * 3 + 10)) candidates.add(n);
    for (const n of candidates) {
      if (n < 0) continue;
      expect(pattern.test(String(n)), `${n} > ${limit}`).toBe(n > limit);
      // Leading zeros and spaces around the value change nothing.
      expect(pattern.test(` 000${n} `), `000${n} > ${limit}`).toBe(n > limit);
    }
    expect(pattern.test('99999999999999999999999')).toBe(true);
    expect(pattern.test('')).toBe(false);
    expect(pattern.test('12a')).toBe(false);
    expect(pattern.test('-5')).toBe(false);
  });

  it('stays within what WAF accepts: no capturing group, at most 200 characters', () => {
    for (const limit of [MAX_BINARY_BODY_BYTES, MAX_TEXT_BODY_BYTES]) {
      const pattern = greaterThanPattern(limit);
      expect(pattern.length).toBeLessThanOrEqual(WAF_REGEX_MAX_LENGTH);
      expect(pattern).not.toMatch(/\((?!\?:)/);
    }
    expect(BINARY_TYPE_PATTERN).not.toMatch(/\((?!\?:)/);
    expect(() => greaterThanPattern(-1)).toThrow(/non-negative/);
  });

  it('recognises the binary media types in a lower-cased Content-Type', () => {
    const pattern = new RegExp(BINARY_TYPE_PATTERN);
    expect(pattern.test('multipart/form-data; boundary=----x')).toBe(true);
    expect(pattern.test('application/octet-stream')).toBe(true);
    expect(pattern.test('application/json')).toBe(false);
    expect(pattern.test('multipart/form-datax')).toBe(false);
    expect(pattern.test('text/plain; x=multipart/form-data')).toBe(false);
  });
});

describe('bodyLimitRules', () => {
  it('answers the 413 envelope the functions would give, as JSON', () => {
    const body = payloadTooLargeBody();
    expect(body.contentType).toBe('APPLICATION_JSON');
    const error = new PayloadTooLargeError(BODY_TOO_LARGE_MESSAGE);
    expect(JSON.parse(body.content)).toEqual({ success: false, error: error.message, code: error.code });
  });

  it('gives each allowed origin a rule of its own with credentialed CORS, and every other request *', () => {
    const rules = bodyLimitRules(['https://app.example.com', '*', 'https://admin.example.com', 'https://app.example.com'], 3);

    expect(rules.map((r) => [r.name, r.priority])).toEqual([
      ['BodyTooLargeFromOrigin1', 3],
      ['BodyTooLargeFromOrigin2', 4],
      ['BodyTooLarge', 5],
    ]);
    const headersOf = (i: number) => (rules[i].action as { block: { customResponse: { responseHeaders: { name: string; value: string }[] } } }).block.customResponse.responseHeaders;
    expect(headersOf(0)).toEqual([
      { name: 'Access-Control-Allow-Origin', value: 'https://app.example.com' },
      { name: 'Access-Control-Allow-Credentials', value: 'true' },
      { name: 'Vary', value: 'Origin' },
    ]);
    expect(headersOf(2)).toEqual([{ name: 'Access-Control-Allow-Origin', value: '*' }]);
    expect(bodyLimitRules([], 0).map((r) => r.name)).toEqual(['BodyTooLarge']);
  });
});

import { describe, expect, it } from 'vitest';
import { foldText } from '../../../shared/query/fold.js';
import { numberFromText } from '../../../shared/query/filter.js';
import { compareText } from '../../../shared/query/sort.js';

describe('foldText', () => {
  it.each([
    ['İstanbul', 'istanbul'],
    ['Straße', 'strasse'],
    ['STRASSE', 'strasse'],
    ['ẞ', 'ss'],
    ['ΟΔΟΣ', 'οδοσ'],
    ['οδος', 'οδοσ'],
    ['Café', 'cafe'],
    ['ｆｕｌｌ', 'full'],
    ['ﬃ', 'ffi'],
    ['DŽ', 'dz'],
  ])('folds %j to %j', (text, folded) => {
    expect(foldText(text)).toBe(folded);
  });
});

describe('compareText', () => {
  it('orders strings as their UTF-8 bytes (code points), not UTF-16 code units', () => {
    const words = ['uo 🚀', 'uo ｚ', 'uo z', 'uo', 'uo \uE000'];
    const byBytes = [...words].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

    expect([...words].sort(compareText)).toEqual(byBytes);
    expect(compareText('ｚ', '🚀')).toBeLessThan(0);
    expect(compareText('a', 'a')).toBe(0);
  });
});

describe('numberFromText', () => {
  it('accepts JSON number syntax only', () => {
    expect(['10', '-1.5', '1e3', '0', '1.0E+1'].map(numberFromText)).toEqual([10, -1.5, 1000, 0, 10]);
    expect(['0x0A', '0b1010', '+10', ' 10', '10 ', '', '010', '.5', '5.', 'NaN', 'Infinity', '1e999'].map(numberFromText)).toEqual(new Array(12).fill(undefined));
  });
});

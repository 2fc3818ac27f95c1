/** The filter a whole-partition read pushes down to DynamoDB. */
import { describe, expect, it } from 'vitest';
import { withPartialCopies } from '../../../shared/data/read-all.js';

describe('withPartialCopies', () => {
  it('adds the partial-copy escape without redundant parentheses (DynamoDB refuses them)', () => {
    const of = (expression: string) => withPartialCopies({ expression, names: {}, values: {} }).expression;

    expect(of('(attribute_not_exists(#f0) OR #f0 <> :v0)')).toBe('(attribute_not_exists(#f0) OR #f0 <> :v0) OR #partialCopy = :partialCopy');
    expect(of('(a = :v0) AND (b = :v1)')).toBe('((a = :v0) AND (b = :v1)) OR #partialCopy = :partialCopy');
    expect(of('a = :v0')).toBe('(a = :v0) OR #partialCopy = :partialCopy');
  });
});

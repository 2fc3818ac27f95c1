import { describe, expect, it } from 'vitest';
import { compile } from '../../../shared/auth/validate.js';
import { ApiError } from '../../../shared/errors.js';

const validate = compile<{ email: string; name: string; age?: number; nested?: { x: string } }>({
  type: 'object',
  additionalProperties: false,
  required: ['email', 'name'],
  properties: {
    email: { type: 'string', format: 'email' },
    name: { type: 'string', minLength: 1, pattern: '\\S' },
    age: { type: 'integer' },
    nested: { type: 'object', required: ['x'], properties: { x: { type: 'string' } } },
  },
});

function detailsOf(body: unknown): Record<string, string> {
  try {
    validate(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(422);
    expect((error as ApiError).code).toBe('VALIDATION_FAILED');
    return (error as ApiError).details as Record<string, string>;
  }
  throw new Error('expected a validation error');
}

describe('compile', () => {
  it('returns a valid body unchanged', () => {
    expect(validate({ email: 'a@b.io', name: 'A' })).toEqual({ email: 'a@b.io', name: 'A' });
  });

  it('reports every failing field at once, keyed by field', () => {
    const details = detailsOf({ email: 'nope', age: 'x', extra: 1 });

    expect(details).toEqual({
      email: 'must be a valid email address',
      name: 'is required',
      age: 'must be an integer',
      extra: 'is not an allowed field',
    });
  });

  it('keys nested fields with dots', () => {
    expect(detailsOf({ email: 'a@b.io', name: 'A', nested: {} })).toEqual({ 'nested.x': 'is required' });
  });

  it('treats a missing body as an empty object', () => {
    expect(detailsOf(undefined)).toEqual({ email: 'is required', name: 'is required' });
  });

  it('calls a blank string blank', () => {
    expect(detailsOf({ email: 'a@b.io', name: '   ' })).toEqual({ name: 'must not be blank' });
  });
});

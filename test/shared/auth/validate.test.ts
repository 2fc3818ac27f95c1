import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { generatedAuthValidators } from '../../../shared/auth/generate.js';
import { bodyValidator } from '../../../shared/auth/validate.js';
import { ApiError } from '../../../shared/errors.js';

function detailsOf(name: Parameters<typeof bodyValidator>[0], body: unknown): Record<string, string> {
  try {
    bodyValidator(name)(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(422);
    expect((error as ApiError).code).toBe('VALIDATION_FAILED');
    return (error as ApiError).details as Record<string, string>;
  }
  throw new Error('expected a validation error');
}

describe('bodyValidator', () => {
  it('returns a valid body unchanged', () => {
    const body = { email: 'a@b.io', name: 'A', password: 'long enough' };

    expect(bodyValidator('createUser')(body)).toEqual(body);
  });

  it('reports every failing field at once, keyed by field', () => {
    const details = detailsOf('createUser', { email: 'nope', password: 'short', role: 'owner', extra: 1 });

    expect(details).toEqual({
      email: 'must be a valid email address',
      name: 'is required',
      password: 'must be at least 8 characters',
      role: 'must be one of: admin, user',
      extra: 'is not an allowed field',
    });
  });

  it('keys nested fields with dots', () => {
    expect(detailsOf('createTenant', { name: 'T', admin: { email: 'a@b.io', name: 'A' } })).toEqual({ 'admin.password': 'is required' });
  });

  it('treats a missing body as an empty object', () => {
    expect(detailsOf('login', undefined)).toEqual({ email: 'is required', password: 'is required' });
  });

  it('calls a blank string blank, and names a field required with another', () => {
    expect(detailsOf('updateMe', { name: '   ', password: 'new password' })).toEqual({ name: 'must not be blank', currentPassword: 'is required with password' });
  });

  it('says at least one field is required of an empty change', () => {
    expect(detailsOf('updateTenant', {})).toEqual({ body: 'at least one field is required' });
  });
});

describe('precompiled auth validators (ajv standalone)', () => {
  it('are current with shared/auth/body-schemas.ts (else: npm run schemas)', () => {
    const file = readFileSync(path.join(PROJECT_ROOT, 'shared/auth/validators.generated.ts'), 'utf8');

    expect(file === generatedAuthValidators(), 'shared/auth/validators.generated.ts is out of date: run npm run schemas').toBe(true);
  });

  it('import nothing of ajv but its run-time helpers (the email format is inlined)', () => {
    const imports = [...generatedAuthValidators().matchAll(/from "([^"]+)"/g)].map((m) => m[1]);

    expect(imports.length).toBeGreaterThan(0);
    for (const module of imports) expect(module).toMatch(/^ajv\/dist\/runtime\//);
  });
});

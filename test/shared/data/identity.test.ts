import { describe, expect, it } from 'vitest';
import {
  emailKey,
  normalizeEmail,
  publicTenant,
  publicUser,
  tenantKey,
  tenantUsersIndexKey,
  updateExpression,
  userIndexSortKey,
  userKey,
  type User,
} from '../../../shared/data/identity.js';

const user: User = {
  id: 'usr_1',
  tenantId: 'ten_1',
  email: 'a@b.c',
  name: 'A',
  role: 'admin',
  passwordHash: 'scrypt$16384$8$1$c2FsdA==$aGFzaA==',
  preferences: { theme: 'dark' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('identity keys', () => {
  it('follow the identity table layout', () => {
    expect(tenantKey('ten_1')).toEqual({ pk: 'TENANT#ten_1', sk: 'TENANT' });
    expect(userKey('usr_1')).toEqual({ pk: 'USER#usr_1', sk: 'USER' });
    expect(tenantUsersIndexKey('ten_1')).toBe('TENANT#ten_1#USERS');
    expect(userIndexSortKey(user)).toBe('2026-01-01T00:00:00.000Z#usr_1');
  });

  it('key e-mails lower-case and trimmed', () => {
    expect(emailKey(' Alice@Example.COM ')).toEqual({ pk: 'EMAIL#alice@example.com', sk: 'EMAIL' });
    expect(normalizeEmail('A@B.C')).toBe('a@b.c');
  });
});

describe('publicUser', () => {
  it('never carries the password hash or a password', () => {
    const shown = publicUser({ ...user, password: 'secret', pk: 'USER#usr_1' } as User);

    expect(shown).toEqual({
      id: 'usr_1',
      tenantId: 'ten_1',
      email: 'a@b.c',
      name: 'A',
      role: 'admin',
      preferences: { theme: 'dark' },
      createdAt: user.createdAt,
      updatedAt: user.updatedAt,
    });
    expect(JSON.stringify(shown)).not.toMatch(/password/i);
  });
});

describe('publicTenant', () => {
  it('hides the operator pointer', () => {
    const shown = publicTenant({ id: 'ten_default', name: 'Default', settings: {}, operatorUserId: 'usr_1', createdAt: 'x', updatedAt: 'y' });

    expect(shown).not.toHaveProperty('operatorUserId');
    expect(shown).toMatchObject({ id: 'ten_default', name: 'Default', settings: {} });
  });
});

describe('updateExpression', () => {
  it('sets every defined value through placeholders and skips undefined ones', () => {
    expect(updateExpression({ name: 'B', role: undefined, updatedAt: 't' })).toEqual({
      expression: 'SET #f0 = :v0, #f1 = :v1',
      names: { '#f0': 'name', '#f1': 'updatedAt' },
      values: { ':v0': 'B', ':v1': 't' },
    });
  });
});

import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ensureBootstrapAdmin, isOperator } from '../../../shared/auth/bootstrap.js';
import { verifyPassword } from '../../../shared/auth/passwords.js';
import { answerFromMap, type Items } from '../../support/identity-table-mock.js';

/** A tiny in-memory identity table: enough of Get, Put, TransactWrite and Update for bootstrap. */
const dynamo = mockClient(DynamoDBDocumentClient);
let items: Items;


beforeEach(() => {
  items = answerFromMap(dynamo);
});

function userByEmail(email: string): Record<string, any> {
  return items.get(`USER#${items.get(`EMAIL#${email}`)!.userId}`)!;
}

describe('ensureBootstrapAdmin', () => {
  it('creates the default tenant and the admin with the given password, returning nothing to print', async () => {
    const generated = await ensureBootstrapAdmin({ email: 'Boss@Example.com', password: 'given-password' });

    const admin = userByEmail('boss@example.com');
    expect(generated).toBeUndefined();
    expect(items.get('TENANT#ten_default')).toMatchObject({ id: 'ten_default', operatorUserId: admin.id });
    expect(admin).toMatchObject({ tenantId: 'ten_default', role: 'admin', email: 'boss@example.com' });
    expect(await verifyPassword('given-password', admin.passwordHash)).toBe(true);
  });

  it('generates a password when none is given, and returns it once', async () => {
    const first = await ensureBootstrapAdmin({});
    const second = await ensureBootstrapAdmin({});

    expect(first?.email).toBe('admin@localhost');
    expect(await verifyPassword(first!.password, userByEmail('admin@localhost').passwordHash)).toBe(true);
    expect(second).toBeUndefined();
  });

  it('is idempotent and makes ADMIN_PASSWORD work again when it changed', async () => {
    await ensureBootstrapAdmin({ email: 'boss@example.com', password: 'first-password' });
    const id = userByEmail('boss@example.com').id;

    await ensureBootstrapAdmin({ email: 'boss@example.com', password: 'second-password' });

    const admin = userByEmail('boss@example.com');
    expect(admin.id).toBe(id);
    expect(await verifyPassword('second-password', admin.passwordHash)).toBe(true);
  });

  it('makes the admin the only operator, moving the role when ADMIN_EMAIL changes', async () => {
    await ensureBootstrapAdmin({ email: 'old@example.com', password: 'old-password' });
    await ensureBootstrapAdmin({ email: 'new@example.com', password: 'new-password' });

    expect(await isOperator({ id: userByEmail('new@example.com').id }, 'ten_default')).toBe(true);
    expect(await isOperator({ id: userByEmail('old@example.com').id }, 'ten_default')).toBe(false);
    expect(await isOperator({ id: userByEmail('new@example.com').id }, 'ten_other')).toBe(false);
  });
});

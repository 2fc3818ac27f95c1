/** A client that retries a record create after a timeout, with the same Idempotency-Key, writes once. */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, newUser } from '../../support/identity.js';
import { as, keyOf, type Caller } from './support.js';

let caller: Caller;

beforeAll(async () => {
  const tenant = await newTenant();
  const user = await newUser(tenant.admin.cookie);
  caller = as(await keyOf(user.cookie));
});

describe('Idempotency-Key on CREATE', () => {
  it('answers a retried create with the first record and writes no second one', async () => {
    const headers = { 'Idempotency-Key': randomUUID() };
    const body = { title: `retried ${randomUUID()}` };

    const first = await caller.post('/api/v1/tasks', body, { headers });
    const retry = await caller.post('/api/v1/tasks', body, { headers });
    const listed = await caller.get(`/api/v1/tasks?search=${encodeURIComponent(body.title)}`);

    expect(first.status, first.text).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body.data.id).toBe(first.body.data.id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(listed.body.pagination.total).toBe(1);
  });

  it('creates again for a retry without the header', async () => {
    const body = { title: `not idempotent ${randomUUID()}` };

    const first = await caller.post('/api/v1/tasks', body);
    const second = await caller.post('/api/v1/tasks', body);

    expect(second.body.data.id).not.toBe(first.body.data.id);
  });
});

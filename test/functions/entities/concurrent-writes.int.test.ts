/**
 * Concurrent writes into the same listing partitions (HTTP, DynamoDB Local): every request
 * succeeds and the totals are exact afterwards in every view that counts them (the counters are
 * sharded, and field counts live in the base partition's counter items).
 * The 500-at-once figures are in the bench (BENCH_ONLY=concurrency).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, newUser, type TestTenant } from '../../support/identity.js';
import { as, keyOf, type Caller } from './support.js';

let tenant: TestTenant;
let owner: Caller;
let admin: Caller;

beforeAll(async () => {
  tenant = await newTenant();
  owner = as(await keyOf((await newUser(tenant.admin.cookie)).cookie));
  admin = as(await keyOf(tenant.admin.cookie));
});

const total = async (caller: Caller, path: string): Promise<number> => {
  const response = await caller.get(path);
  expect(response.status, response.text).toBe(200);
  return response.body.pagination.total;
};

describe('concurrent creates, updates and deletes in one partition', () => {
  it('50 creates at once: all 201, exact totals in the owner, tenant and field views', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => owner.post('/api/v1/tasks', { title: `Concurrent ${i}`, status: i % 2 ? 'todo' : 'in_progress' })),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
    expect(await total(owner, '/api/v1/tasks?limit=5')).toBe(50);
    expect(await total(admin, '/api/v1/tasks?limit=5')).toBe(50);
    expect(await total(owner, '/api/v1/tasks?status=todo&limit=5')).toBe(25);
    expect(await total(admin, '/api/v1/tasks?status=in_progress&limit=5&page=3')).toBe(25);
    const first = await owner.get('/api/v1/tasks?priority=medium&limit=5');
    expect(first.body.pagination.total).toBe(50);
    const next = await owner.get(`/api/v1/tasks?priority=medium&limit=5&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
    expect(next.body.pagination.total).toBe(50);
  });

  it('moves between field partitions and deletes at once keep every total exact', async () => {
    const listed = (await owner.get('/api/v1/tasks?status=todo&limit=100')).body.data as { id: string }[];
    const [moved, deleted] = [listed.slice(0, 10), listed.slice(10, 20)];

    const responses = await Promise.all([
      ...moved.map((t) => owner.patch(`/api/v1/tasks/${t.id}`, { status: 'completed' })),
      ...deleted.map((t) => owner.del(`/api/v1/tasks/${t.id}`)),
    ]);

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await total(owner, '/api/v1/tasks?limit=5')).toBe(40);
    expect(await total(owner, '/api/v1/tasks?status=todo&limit=5')).toBe(5);
    expect(await total(admin, '/api/v1/tasks?status=completed&limit=5')).toBe(10);
    expect(await total(admin, '/api/v1/tasks?status=in_progress&limit=5')).toBe(25);
    const walked = (await owner.get('/api/v1/tasks?status=todo&limit=100')).body.data;
    expect(walked).toHaveLength(5);
  });
});

/**
 * Hostile nesting in an import (and a single create): refused at parse with 400 before anything
 * is written; a large invalid value is reported by its field, never echoed whole.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../../shared/http/json-body.js';
import { newTenant, newUser } from '../../support/identity.js';
import { as, keyOf, type Caller } from '../entities/support.js';

let caller: Caller;

beforeAll(async () => {
  const tenant = await newTenant();
  const user = await newUser(tenant.admin.cookie);
  caller = as(await keyOf(user.cookie));
});

/** An object nested `levels` deep, as JSON text (JSON.stringify itself would overflow). */
function deep(levels: number): string {
  return `${'{"x":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

async function titled(slug: string, field: string, value: string): Promise<number> {
  const response = await caller.get(`/api/v1/${slug}?filter=${encodeURIComponent(JSON.stringify({ [field]: value }))}&limit=100`);
  expect(response.status, response.text).toBe(200);
  return response.body.data.length;
}

describe('deeply nested import bodies', () => {
  it('answers 400 INVALID_REQUEST to a task import nested 5,000 levels, and writes nothing', async () => {
    const title = `deep-${Date.now()}`;
    const rawBody = `{"notify":true,"tasks":[{"title":"${title}"},{"title":"bad","x":${deep(5000)}}]}`;

    const response = await caller.post('/api/v1/import/tasks', undefined, { rawBody, headers: { 'Content-Type': 'application/json' } });

    expect(response.status, response.text).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 'INVALID_REQUEST', details: { body: `must not nest more than ${MAX_JSON_DEPTH} levels` } });
    expect(await titled('tasks', 'title', title)).toBe(0);
  });

  it('answers 400 to a product import with skipInvalid nested 5,000 levels, and writes nothing', async () => {
    const name = `deep-${Date.now()}`;
    const rawBody = `{"options":{"skipInvalid":true},"items":[{"name":"${name}","price":1},{"name":"bad","price":1,"x":${deep(5000)}}]}`;

    const response = await caller.post('/api/v1/import/products', undefined, { rawBody, headers: { 'Content-Type': 'application/json' } });

    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('INVALID_REQUEST');
    expect(await titled('products', 'name', name)).toBe(0);
  });

  it('answers 400 to a single create nested 5,000 levels', async () => {
    const response = await caller.post('/api/v1/tasks', undefined, { rawBody: `{"title":"bad","x":${deep(5000)}}`, headers: { 'Content-Type': 'application/json' } });

    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('INVALID_REQUEST');
  });

  it(`accepts ${MAX_JSON_DEPTH} levels at parse, and reports the unknown field by name with a bounded echo`, async () => {
    const title = `within-${Date.now()}`;
    // The body is 1 level, tasks 2, the item 3: x's value may take the remaining levels.
    const rawBody = `{"notify":true,"tasks":[{"title":"${title}"},{"title":"bad","x":${deep(MAX_JSON_DEPTH - 3)},"pad":"${'p'.repeat(40_000)}"}]}`;

    const response = await caller.post('/api/v1/import/tasks', undefined, { rawBody, headers: { 'Content-Type': 'application/json' } });

    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toMatchObject({ imported: 1, failed: 1 });
    const [error] = response.body.data.errors;
    expect(error).toMatchObject({ index: 1, details: { x: 'is not a field of tasks' } });
    expect(error.task.title).toBe('bad');
    expect(error.task.pad).toBe('(40002 characters of JSON omitted)');
    expect(response.text.length).toBeLessThan(10_000);
    expect(await titled('tasks', 'title', title)).toBe(1);
  });
});

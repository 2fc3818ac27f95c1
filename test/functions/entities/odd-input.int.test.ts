/**
 * Odd input through HTTP answers 4xx (or an empty match), never 500: values DynamoDB cannot store,
 * keys it cannot hold, expressions over its limits, prototype names.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, newUser } from '../../support/identity.js';
import { as, created, keyOf, type Caller } from './support.js';

let user: Caller;

beforeAll(async () => {
  const tenant = await newTenant();
  user = as(await keyOf((await newUser(tenant.admin.cookie)).cookie));
});

const q = (value: unknown) => encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value));

describe('writes of values DynamoDB cannot store', () => {
  it('answers 422 naming the field for numbers beyond the safe range or too small, in fields and metadata', async () => {
    const responses = [
      await user.post('/api/v1/products', { name: 'Huge', price: 1e300 }),
      await user.post('/api/v1/products', { name: 'Tiny', price: 1e-300 }),
      await user.post('/api/v1/orders', { total: 9007199254740993 }),
      await user.post('/api/v1/tasks', { title: 'Meta', metadata: { n: 123456789012345678901234567890 } }),
    ];

    expect(responses.map((r) => r.status)).toEqual([422, 422, 422, 422]);
    expect(responses[0].body).toMatchObject({ code: 'VALIDATION_FAILED', details: { price: expect.any(String) } });
    expect(responses[1].body.details).toHaveProperty('price');
    expect(responses[2].body.details).toHaveProperty('total');
    expect(responses[3].body.details).toHaveProperty('metadata');
  });

  it('answers 422 for metadata nested deeper than DynamoDB stores, 400 at parse past 64 levels, and 422 for empty keys in metadata or metas', async () => {
    const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const tooDeepToParse = await user.post('/api/v1/tasks', undefined, { rawBody: `{"title":"Deeper","metadata":${deep(50_000)}}`, headers: { 'Content-Type': 'application/json' } });
    expect(tooDeepToParse.status, tooDeepToParse.text).toBe(400);
    expect(tooDeepToParse.body.code).toBe('INVALID_REQUEST');
    const responses = [
      await user.post('/api/v1/tasks', undefined, { rawBody: `{"title":"Deep","metadata":${deep(40)}}`, headers: { 'Content-Type': 'application/json' } }),
      await user.post('/api/v1/tasks', undefined, { rawBody: `{"title":"Deep 62","metadata":${deep(62)}}`, headers: { 'Content-Type': 'application/json' } }),
      await user.post('/api/v1/tasks', { title: 'Empty key', metadata: { '': 1 } }),
      await user.post('/api/v1/tasks', { title: 'Empty metas key', metas: { '': 'x' } }),
    ];
    const task = await created(user, 'tasks', { title: 'Patched' });
    const patched = await user.patch(`/api/v1/tasks/${task.id}`, { metadata: { '': 1 } });

    for (const response of [...responses, patched]) {
      expect(response.status, response.text).toBe(422);
      expect(response.body.code).toBe('VALIDATION_FAILED');
    }
    expect(responses[0].body.details).toHaveProperty('metadata');
    expect(responses[3].body.details).toHaveProperty('metas');
  });

  it('drops __proto__ and constructor keys of metas, and names such keys at the top level in details', async () => {
    const json = { headers: { 'Content-Type': 'application/json' } };
    const task = await user.post('/api/v1/tasks', undefined, { ...json, rawBody: '{"title":"Metas","metas":{"constructor":"c","__proto__":"p","kept":"k"}}' });
    const read = await user.get(`/api/v1/tasks/${task.body.data?.id}?metas=all`);
    const unknown = await user.post('/api/v1/tasks', undefined, { ...json, rawBody: '{"title":"x","__proto__":{"a":1}}' });

    expect(task.status, task.text).toBe(201);
    expect(read.body.data.metas).toEqual({ kept: 'k' });
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.details)).toEqual(['__proto__']);
  });

  it('stores and finds an indexed value holding a lone surrogate', async () => {
    const product = await created(user, 'products', { name: 'Lone', price: 1, category: 'odd\ud800' });
    const found = await user.get(`/api/v1/products?filter=${q({ category: 'odd\ud800' })}`);

    expect(found.status, found.text).toBe(200);
    expect(found.body.data.map((p: { id: string }) => p.id)).toContain(product.id);
  });
});

describe('LIST with parameters beyond DynamoDB limits', () => {
  it('answers with what matches, not 500: over-long ids and indexed values, a huge page, many search words, deep metadata paths', async () => {
    const long = 'x'.repeat(3000);
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    const responses = [
      await user.get(`/api/v1/tasks?ids=a,${long}`),
      await user.get(`/api/v1/tasks?assigneeId=${long}`),
      await user.get(`/api/v1/tasks?status=todo&priority=${long}`),
      await user.get('/api/v1/tasks?page=9007199254740991'),
      await user.get(`/api/v1/tasks?search=${q(words)}`),
      await user.get(`/api/v1/tasks?filter=${q({ [`metadata.${Array(200).fill('a').join('.')}`]: 'x' })}`),
    ];

    for (const response of responses) {
      expect(response.status, response.text).toBe(200);
      expect(response.body.data).toEqual([]);
    }
  });

  it('refuses prototype names as filter or sort fields (400 INVALID_FILTER / INVALID_SORT)', async () => {
    const filtered = await user.get(`/api/v1/tasks?filter=${q({ constructor: 'x' })}`);
    const sorted = await user.get('/api/v1/tasks?sort=__proto__');

    expect(filtered.status).toBe(400);
    expect(filtered.body.code).toBe('INVALID_FILTER');
    expect(sorted.status).toBe(400);
    expect(sorted.body.code).toBe('INVALID_SORT');
  });
});

describe('import with odd values', () => {
  it('reports an over-long assigneeEmail and an unstorable number as failed items, not 500 or 503', async () => {
    const tasks = await user.post('/api/v1/import/tasks', { tasks: [{ title: 'a', assigneeEmail: `${'x'.repeat(3000)}@example.com` }], assignUsers: true });
    const products = await user.post('/api/v1/import/products', { items: [{ name: 'a', price: 1e300 }], options: { skipInvalid: true, returnFailures: true } });

    expect(tasks.status, tasks.text).toBe(201);
    expect(tasks.body.data).toMatchObject({ imported: 0, failed: 1 });
    expect(products.status, products.text).toBe(201);
    expect(products.body.data).toMatchObject({ created: 0, failed: 1, failures: [{ index: 0, details: { price: expect.any(String) } }] });
  });
});

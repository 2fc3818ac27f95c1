/**
 * POST /api/v1/ai/generate and the credits endpoints through HTTP on the local runtime (the
 * deterministic local provider): defaults and both models, field rules, authentication, the
 * ai:write scope, the 20-per-hour limit, exact charging, admin grants (audited) and tenancy.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';

let tenant: TestTenant;
let user: TestUser;

beforeAll(async () => {
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
});

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

async function createKey(cookie: string, scopes: string[]): Promise<string> {
  const response = await api('POST', '/api/v1/api-keys', { cookie, body: { name: 'ai test', scopes } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.key as string;
}

describe('POST /api/v1/ai/generate', () => {
  it('generates with the defaults: the fast model, at most 100 tokens, tokensUsed counting the words', async () => {
    const response = await api('POST', '/api/v1/ai/generate', { cookie: user.cookie, body: { prompt: 'Write a haiku about tables' } });

    expect(response.status, response.text).toBe(200);
    expect(response.body.success).toBe(true);
    const { text, tokensUsed, model } = response.body.data;
    expect(model).toBe('fast');
    expect(typeof text).toBe('string');
    expect(tokensUsed).toBe(words(text));
    expect(tokensUsed).toBeGreaterThanOrEqual(50);
    expect(tokensUsed).toBeLessThanOrEqual(100);
    expect(response.headers.get('x-ratelimit-limit')).toBe('20');
  });

  it('answers the same input with the same output, and each model differently', async () => {
    const body = { prompt: 'Same question', maxTokens: 40, temperature: 0.2 };
    const first = await api('POST', '/api/v1/ai/generate', { cookie: user.cookie, body: { ...body, model: 'quality' } });
    const again = await api('POST', '/api/v1/ai/generate', { cookie: user.cookie, body: { ...body, model: 'quality' } });
    const fast = await api('POST', '/api/v1/ai/generate', { cookie: user.cookie, body: { ...body, model: 'fast' } });

    expect(first.status, first.text).toBe(200);
    expect(first.body.data.model).toBe('quality');
    expect(again.body.data).toEqual(first.body.data);
    expect(fast.body.data.model).toBe('fast');
    expect(fast.body.data.text).not.toBe(first.body.data.text);
    expect(first.body.data.tokensUsed).toBeLessThanOrEqual(40);
  });

  it('accepts the boundary values of every field', async () => {
    const caller = await newUser(tenant.admin.cookie);
    const bodies = [
      { prompt: 'x', maxTokens: 10, temperature: 0 },
      { prompt: 'y'.repeat(1000), maxTokens: 500, temperature: 1, model: 'quality' },
    ];
    for (const body of bodies) {
      const response = await api('POST', '/api/v1/ai/generate', { cookie: caller.cookie, body });
      expect(response.status, response.text).toBe(200);
      expect(response.body.data.tokensUsed).toBeLessThanOrEqual(body.maxTokens);
    }
  });

  it('refuses values outside the rules with 422 naming the field', async () => {
    const caller = await newUser(tenant.admin.cookie);
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'prompt'],
      [{ prompt: '' }, 'prompt'],
      [{ prompt: 'z'.repeat(1001) }, 'prompt'],
      [{ prompt: 42 }, 'prompt'],
      [{ prompt: 'ok', maxTokens: 9 }, 'maxTokens'],
      [{ prompt: 'ok', maxTokens: 501 }, 'maxTokens'],
      [{ prompt: 'ok', maxTokens: 10.5 }, 'maxTokens'],
      [{ prompt: 'ok', temperature: -0.01 }, 'temperature'],
      [{ prompt: 'ok', temperature: 1.01 }, 'temperature'],
      [{ prompt: 'ok', temperature: '0.5' }, 'temperature'],
      [{ prompt: 'ok', model: 'huge' }, 'model'],
      [{ prompt: 'ok', colour: 'blue' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const response = await api('POST', '/api/v1/ai/generate', { cookie: caller.cookie, body });
      expect(response.status, `${JSON.stringify(body).slice(0, 60)}: ${response.text.slice(0, 200)}`).toBe(422);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(Object.keys(response.body.details)).toContain(field);
    }
    const malformed = await api('POST', '/api/v1/ai/generate', { cookie: caller.cookie, rawBody: '{"prompt":', headers: { 'Content-Type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('INVALID_REQUEST');
    // Nothing was charged for refused requests.
    const credits = await api('GET', '/api/v1/ai/credits', { cookie: caller.cookie });
    expect(credits.body.data).toEqual({ balance: 10000, lastUsage: null });
  });

  it('needs credentials (401) and the ai:write scope (403)', async () => {
    const anonymous = await api('POST', '/api/v1/ai/generate', { body: { prompt: 'hi' } });
    const readOnly = await createKey(user.cookie, ['tasks:read', 'ai:read']);
    const denied = await api('POST', '/api/v1/ai/generate', { apiKey: readOnly, body: { prompt: 'hi' } });
    const writer = await createKey(user.cookie, ['ai:write']);
    const allowed = await api('POST', '/api/v1/ai/generate', { apiKey: writer, body: { prompt: 'hi' } });

    expect(anonymous.status).toBe(401);
    expect(anonymous.body.success).toBe(false);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(allowed.status, allowed.text).toBe(200);
  });

  it('answers the 21st call of an hour with 429 and Retry-After', async () => {
    const caller = await newUser(tenant.admin.cookie);
    for (let i = 1; i <= 20; i++) {
      const ok = await api('POST', '/api/v1/ai/generate', { cookie: caller.cookie, body: { prompt: `call ${i}`, maxTokens: 10 } });
      expect(ok.status, `call ${i}: ${ok.text}`).toBe(200);
    }

    const over = await api('POST', '/api/v1/ai/generate', { cookie: caller.cookie, body: { prompt: 'call 21', maxTokens: 10 } });

    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    // Other endpoints are not held back by the generation limit.
    expect((await api('GET', '/api/v1/ai/credits', { cookie: caller.cookie })).status).toBe(200);
  });
});

describe('credits', () => {
  it('charges exactly tokensUsed per call and shows the last usage', async () => {
    const caller = await newUser(tenant.admin.cookie);
    const before = await api('GET', '/api/v1/ai/credits', { cookie: caller.cookie });
    expect(before.body.data).toEqual({ balance: 10000, lastUsage: null });

    const a = await api('POST', '/api/v1/ai/generate', { cookie: caller.cookie, body: { prompt: 'first', maxTokens: 300 } });
    const b = await api('POST', '/api/v1/ai/generate', { cookie: caller.cookie, body: { prompt: 'second', maxTokens: 77, model: 'quality' } });
    const after = await api('GET', '/api/v1/ai/credits', { cookie: caller.cookie });

    expect(after.body.data.balance).toBe(10000 - a.body.data.tokensUsed - b.body.data.tokensUsed);
    expect(after.body.data.lastUsage).toMatchObject({ tokensUsed: b.body.data.tokensUsed, model: 'quality' });
    expect(Date.parse(after.body.data.lastUsage.at)).not.toBeNaN();
  });

  it('lets an admin grant credits to a user of the tenant, audited; not a user, not across tenants', async () => {
    const caller = await newUser(tenant.admin.cookie);
    const other = await newTenant();

    const granted = await api('POST', `/api/v1/ai/credits/${caller.id}`, { cookie: tenant.admin.cookie, body: { amount: 250, reason: 'pilot' } });
    const byUser = await api('POST', `/api/v1/ai/credits/${caller.id}`, { cookie: user.cookie, body: { amount: 250 } });
    const foreign = await api('POST', `/api/v1/ai/credits/${caller.id}`, { cookie: other.admin.cookie, body: { amount: 250 } });
    const badAmount = await api('POST', `/api/v1/ai/credits/${caller.id}`, { cookie: tenant.admin.cookie, body: { amount: 0 } });
    const view = await api('GET', `/api/v1/ai/credits/${caller.id}`, { cookie: tenant.admin.cookie });
    const own = await api('GET', '/api/v1/ai/credits', { cookie: caller.cookie });

    expect(granted.status, granted.text).toBe(200);
    expect(granted.body.data).toMatchObject({ userId: caller.id, balance: 10250, grant: { amount: 250, reason: 'pilot', grantedBy: tenant.admin.id, balanceAfter: 10250 } });
    expect(byUser.status).toBe(403);
    expect(foreign.status).toBe(404);
    expect(badAmount.status).toBe(422);
    expect(Object.keys(badAmount.body.details)).toContain('amount');
    expect(own.body.data.balance).toBe(10250);
    expect(view.body.data.grants).toHaveLength(1);
    expect(view.body.data.grants[0]).toMatchObject({ amount: 250, grantedBy: tenant.admin.id, tenantId: tenant.tenantId });
  });
});

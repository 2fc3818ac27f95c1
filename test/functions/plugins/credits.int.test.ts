/**
 * Credits under pressure, on a server of its own with AI_DEFAULT_CREDITS=1000: a balance that
 * runs out answers 402 INSUFFICIENT_CREDITS, and parallel calls never spend more than there is.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { uniqueEmail } from '../../support/identity.js';
import { OPERATOR, startServer, type TestServer } from '../../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { AI_DEFAULT_CREDITS: '1000' } });
}, 90_000);

afterAll(async () => {
  await server?.stop();
});

/** A fresh user of the default tenant, logged in on this server. */
async function freshUser(): Promise<string> {
  const operator = await api('POST', '/api/v1/auth/login', { baseUrl: server.url, body: OPERATOR });
  const cookie = operator.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
  const email = uniqueEmail('credits');
  const password = 'pw-credits-1234';
  const created = await api('POST', '/api/v1/users', { baseUrl: server.url, cookie, body: { email, name: 'Credits', password, role: 'user' } });
  expect(created.status, created.text).toBe(201);
  const session = await api('POST', '/api/v1/auth/login', { baseUrl: server.url, body: { email, password } });
  return session.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0];
}

async function balance(cookie: string): Promise<number> {
  const response = await api('GET', '/api/v1/ai/credits', { baseUrl: server.url, cookie });
  return response.body.data.balance;
}

describe('credits', () => {
  it('answers 402 INSUFFICIENT_CREDITS once the balance cannot cover maxTokens, charging nothing for it', async () => {
    const cookie = await freshUser();
    let status = 200;
    let calls = 0;
    while (status === 200 && calls < 10) {
      const response = await api('POST', '/api/v1/ai/generate', { baseUrl: server.url, cookie, body: { prompt: `spend ${calls}`, maxTokens: 400 } });
      status = response.status;
      calls++;
      if (status === 402) {
        expect(response.body).toMatchObject({ success: false, code: 'INSUFFICIENT_CREDITS' });
      }
    }
    const left = await balance(cookie);

    expect(status).toBe(402);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(left).toBeLessThan(400);
    // A smaller request that the balance covers still goes through.
    if (left >= 10) {
      const small = await api('POST', '/api/v1/ai/generate', { baseUrl: server.url, cookie, body: { prompt: 'small', maxTokens: 10 } });
      expect(small.status, small.text).toBe(200);
      expect(await balance(cookie)).toBe(left - small.body.data.tokensUsed);
    }
  });

  it('never overspends: 20 parallel calls with credits for 10 reservations', async () => {
    const cookie = await freshUser();

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api('POST', '/api/v1/ai/generate', { baseUrl: server.url, cookie, body: { prompt: `parallel ${i}`, maxTokens: 100 } })),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    const spent = ok.reduce((sum, r) => sum + (r.body.data.tokensUsed as number), 0);
    const left = await balance(cookie);

    expect(ok.length + refused.length, responses.map((r) => r.status).join(',')).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(10);
    expect(refused.length).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(1000);
    expect(left).toBe(1000 - spent);
  });
});

/**
 * An export that needs more requests than the session's rate-limit window has left, in a real
 * browser against a server of its own with a tight session limit (3 requests per 10-second
 * window, admins' sessions too): the dialog says before it starts that it will wait for the
 * window, the export spends what the window has, then pauses (no 429), says when it goes on,
 * resumes from the same cursor when the window resets, and the file has every record once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, type TestTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { launch, newContext, signIn, watch } from './browser.js';

const WINDOW_SECONDS = 10;
const SEEDED = 550;

let browser: Browser;
let server: TestServer;
let dataDir: string;
let tenant: TestTenant;
const ids: string[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'dashboard-export-limits-'));
  server = await startServer({
    dynamoEndpoint: inject('dynamoEndpoint'),
    env: { DATA_DIR: dataDir, RATE_LIMIT_SESSION_PER_HOUR: '3', RATE_LIMIT_ADMIN_SESSION_PER_HOUR: '3', RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS), RATE_LIMIT_LEASE_BLOCK: '1' },
  });
  // Tenant and records through the suite's server (same tables, its own generous limits).
  tenant = await newTenant();
  for (let offset = 0; offset < SEEDED; offset += 100) {
    const items = Array.from({ length: Math.min(100, SEEDED - offset) }, (_, i) => ({ name: `Limited ${String(offset + i).padStart(4, '0')}` }));
    const res = await api('POST', '/api/v1/import/tags', { cookie: tenant.admin.cookie, body: { items } });
    expect(res.status, res.text).toBeLessThan(300);
  }
  for (let page = 1; ids.length < SEEDED; page++) {
    const res = await api('GET', `/api/v1/tags?limit=100&page=${page}`, { cookie: tenant.admin.cookie });
    if (!res.body.data.length) break;
    ids.push(...res.body.data.map((t: { id: string }) => t.id));
  }
  expect(ids).toHaveLength(SEEDED);
  browser = await launch();
}, 120_000);

afterAll(async () => {
  for (let i = 0; i < ids.length; i += 100) await api('DELETE', '/api/v1/tags', { cookie: tenant.admin.cookie, body: { ids: ids.slice(i, i + 100) } });
  await browser?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('an export over the session\'s rate limit', () => {
  it('says it will wait, pauses when the window is spent until it resets, then goes on from the same cursor, and the file has every record once', async () => {
    const context = await newContext(browser, { baseURL: server.url });
    const page = await context.newPage();
    const problems = watch(page, [401, 429]);
    const answers: number[] = [];
    page.on('response', (r) => r.request().method() === 'GET' && /\/api\/v1\/tags\?/.test(r.url()) && r.url().includes('limit=100') && answers.push(r.status()));
    await signIn(page, tenant.admin.email, tenant.admin.password, '#/tags');
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    // A fresh window: its 3 requests go to the export's first 3 pages, the 4th meets the limit.
    await page.waitForTimeout(WINDOW_SECONDS * 1000 - (Date.now() % (WINDOW_SECONDS * 1000)) + 300);

    await page.getByRole('button', { name: 'Export NDJSON' }).click();
    const dialog = page.getByRole('dialog', { name: 'Export tags as NDJSON' });
    const plan = await dialog.locator('.plan').innerText();
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 45_000 }),
      (async () => {
        await dialog.getByRole('button', { name: 'Start export' }).click();
        await dialog.getByText(/The export waits for the session's rate-limit window to reset: it goes on at/).waitFor({ timeout: 15_000 });
      })(),
    ]);
    await dialog.getByText(`Exported ${SEEDED} records in 6 requests`).waitFor();
    const records = (await readFile((await download.path())!, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { id: string });

    expect(plan).toMatch(/6 requests of your session's rate-limit window/);
    expect(plan).toMatch(/then waits for the window to reset at/);
    // Paced within the window: it waited for the reset instead of meeting the limit.
    expect(answers.filter((s) => s === 429)).toEqual([]);
    expect(answers.filter((s) => s === 200)).toHaveLength(6);
    expect(records).toHaveLength(SEEDED);
    expect(new Set(records.map((r) => r.id))).toEqual(new Set(ids));
    expect(problems.filter((p) => !/429|401/.test(p))).toEqual([]);
    await context.close();
  }, 90_000);
});

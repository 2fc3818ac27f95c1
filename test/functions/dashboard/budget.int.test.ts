/**
 * The dashboard within the rate limits, in a real browser against a server of its own with the
 * default limits (a user's session 100, an admin's 5,000; a window of a day here, so no window
 * ends mid-test): an admin clicks through 30 minutes' worth of views, 300 requests, without a
 * 429; a plain user at the limit sees a polite banner with a countdown on every page, and a
 * reload shows it too; a network failure ends in a message and a Retry, never a spinner.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestTenant, type TestUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { expectAccessible, launch, newContext, screenshots, settled, signIn, watch } from './browser.js';

let browser: Browser;
let server: TestServer;
let dataDir: string;
let tenant: TestTenant;
let user: TestUser;
let taskId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'dashboard-budget-'));
  server = await startServer({
    dynamoEndpoint: inject('dynamoEndpoint'),
    env: { DATA_DIR: dataDir, RATE_LIMIT_SESSION_PER_HOUR: '100', RATE_LIMIT_WINDOW_SECONDS: '86400', RATE_LIMIT_LEASE_BLOCK: '1' },
  });
  // Identities and records through the suite's server (same tables, its own generous limits).
  tenant = await newTenant();
  user = await newUser(tenant.admin.cookie);
  const tag = await api('POST', '/api/v1/tags', { cookie: tenant.admin.cookie, body: { name: 'budget' } });
  for (let i = 0; i < 12; i++) {
    const task = await api('POST', '/api/v1/tasks', { cookie: tenant.admin.cookie, body: { title: `Budget task ${i}`, priority: ['low', 'medium', 'high'][i % 3], tagIds: [tag.body.data.id] } });
    taskId = task.body.data.id;
  }
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** Goes to a view of the dashboard in the same document, and waits until its requests are answered. */
async function visit(page: Page, hash: string, ready: (p: Page) => Promise<unknown>): Promise<void> {
  await page.evaluate((h) => (location.hash = h), hash);
  await ready(page);
  await settled(page);
}

describe('an admin at work', () => {
  it("clicks through 30 minutes' worth of views, 300 requests, without a 429, the budget in sight", async () => {
    const context = await newContext(browser, { baseURL: server.url });
    const page = await context.newPage();
    // The one 401: the page asks who is signed in before the sign-in.
    const problems = watch(page, [401]);
    const statuses: number[] = [];
    page.on('response', (r) => new URL(r.url()).pathname.startsWith('/api/v1/') && !r.url().endsWith('/openapi.json') && statuses.push(r.status()));
    await signIn(page, tenant.admin.email, tenant.admin.password, '#/tasks');
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    const table = (p: Page) => p.getByRole('table').locator('tbody tr').first().waitFor();
    const views: [string, (p: Page) => Promise<unknown>][] = [
      ['#/tasks?sort=title&order=asc', table],
      ['#/tasks?sort=title&order=desc', table],
      ['#/tasks?limit=10', table],
      ['#/tasks?search=Budget&sort=priority&order=asc', table],
      [`#/tasks/${taskId}`, (p) => p.getByLabel('title').waitFor()],
      ['#/tags', table],
      ['#/tasks/schema', (p) => p.getByRole('heading', { name: 'Fields and rules' }).waitFor()],
      ['#/customers', (p) => p.getByText('No customers yet').waitFor()],
      ['#/keys', (p) => p.getByRole('heading', { name: 'API keys' }).waitFor()],
      ['#/settings', (p) => p.getByRole('heading', { name: 'Users of the tenant' }).waitFor()],
    ];

    for (let i = 0; statuses.length < 300; i++) await visit(page, views[i % views.length][0], views[i % views.length][1]);
    const quota = await page.getByRole('img', { name: /Requests left in this rate-limit window/ }).getAttribute('aria-label');

    expect(statuses.length).toBeGreaterThanOrEqual(300);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    // The window shows every request charged to the session: all but the 401 before the sign-in
    // and the sign-in itself (charged to the address, not the session).
    expect(Number(/: ([\d,]+) of/.exec(quota!)![1].replace(/,/g, ''))).toBeLessThanOrEqual(5000 - (statuses.length - 2));
    expect(quota).toContain('of 5,000');
    expect(await page.getByRole('heading', { name: 'A short pause' }).count()).toBe(0);
    expect(problems).toEqual([]);
    // This server's admin password was given (ADMIN_PASSWORD): its start said so, and nothing else.
    expect(server.output()).toMatch(/Password {3}the one in ADMIN_PASSWORD\n/);
    await context.close();
  }, 240_000);
});

describe('a plain user at the limit', () => {
  it('sees a polite banner with a countdown on every page, and after a reload, with a Retry', async () => {
    // The user's 100 requests of the window, spent elsewhere.
    for (let i = 0; i < 100; i++) expect((await api('GET', '/api/v1/users/me', { baseUrl: server.url, cookie: user.cookie })).status).toBe(200);
    const context = await newContext(browser, { baseURL: server.url });
    const page = await context.newPage();
    const problems = watch(page, [401, 429]);
    await signIn(page, user.email, user.password, '#/tasks');
    const banner = page.getByRole('region', { name: 'A short pause' });
    const pages: [string, string][] = [
      ['#/tasks', 'tasks'],
      ['#/tasks/new', ''],
      [`#/tasks/${taskId}`, ''],
      ['#/tasks/schema', 'Schema of tasks'],
      ['#/keys', 'API keys'],
      ['#/webhooks', 'Webhooks'],
      ['#/files', 'Files'],
      ['#/settings', 'Settings'],
    ];

    const seen: Record<string, { timer: string; retry: boolean }> = {};
    for (const [hash, heading] of pages) {
      await page.evaluate((h) => (location.hash = h), hash);
      if (heading) await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
      await banner.waitFor();
      await page.getByRole('alert').first().waitFor();
      seen[hash] = { timer: await banner.getByRole('timer').innerText(), retry: await page.getByRole('alert').first().getByRole('button', { name: 'Retry' }).isDisabled() };
    }
    await expectAccessible(page, 'the rate-limit banner');
    const first = await banner.getByRole('timer').innerText();
    await page.waitForTimeout(2100);
    const later = await banner.getByRole('timer').innerText();

    for (const [hash] of pages) {
      expect(seen[hash].timer, hash).toMatch(/^\d+:\d\d(:\d\d)?$/);
      expect(seen[hash].retry, hash).toBe(true);
    }
    expect(later).not.toBe(first);
    expect(await banner.innerText()).toMatch(/used the 100 requests its rate-limit window allows/);
    expect(await page.getByRole('img', { name: /Requests left/ }).getAttribute('aria-label')).toMatch(/: 0 of 100/);

    // A reload of the tab shows it at once; a new tab (nothing kept) checks the session and shows it, never "Checking your session…" for ever.
    await page.reload();
    await banner.waitFor();
    const fresh = await context.newPage();
    await fresh.goto('/dashboard');
    await fresh.getByRole('region', { name: 'A short pause' }).waitFor();
    const check = fresh.getByRole('alert').filter({ hasText: 'Your session could not be checked' });
    await check.waitFor();
    expect(await check.getByRole('button', { name: 'Retry' }).count()).toBe(1);
    expect(await fresh.getByText('Checking your session').count()).toBe(0);
    await expectAccessible(fresh, 'the session check at the limit');
    expect(problems).toEqual([]);

    const state = await context.storageState();
    await screenshots(browser, 'rate-limited', state, async (p) => {
      await p.goto('/dashboard');
      await p.getByRole('region', { name: 'A short pause' }).waitFor();
    }, server.url);
    await context.close();
  }, 120_000);
});

describe('the limit met at the bottom of a page', () => {
  it('shows the notice in sight, in the sticky header, when Next under a long table answers 429', async () => {
    const reader = await newUser(tenant.admin.cookie);
    for (let i = 0; i < 30; i++) await api('POST', '/api/v1/tasks', { cookie: reader.cookie, body: { title: `Reader task ${i}` } });
    const context = await newContext(browser, { baseURL: server.url });
    const page = await context.newPage();
    await signIn(page, reader.email, reader.password, '#/tasks?limit=20');
    await page.getByRole('table').locator('tbody tr').nth(19).waitFor();
    await settled(page);
    // The rest of the window, spent elsewhere.
    while ((await api('GET', '/api/v1/users/me', { baseUrl: server.url, cookie: reader.cookie })).status !== 429);

    const next = page.getByRole('button', { name: 'Next →' });
    await next.scrollIntoViewIfNeeded();
    await next.click();
    const banner = page.getByRole('region', { name: 'A short pause' });
    await banner.waitFor();
    const box = (await banner.boundingBox())!;
    const scrolled = await page.evaluate(() => window.scrollY);

    expect(scrolled).toBeGreaterThan(0);
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(page.viewportSize()!.height);
    await context.close();
  }, 60_000);
});

describe('a network failure', () => {
  it('ends in a clear message and a Retry that loads the page, on the session check and on a page', async () => {
    const context = await newContext(browser, { baseURL: server.url });
    const page = await context.newPage();
    await signIn(page, tenant.admin.email, tenant.admin.password, '#/tags');
    await page.getByRole('table').waitFor();

    await page.route(/\/api\/v1\/tasks\?/, (route) => route.abort('connectionrefused'));
    await page.evaluate(() => (location.hash = '#/tasks?sort=title&order=asc'));
    const failed = page.getByRole('alert').filter({ hasText: 'The API could not be reached' });
    await failed.waitFor();
    await page.unroute(/\/api\/v1\/tasks\?/);
    await failed.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('table').locator('tbody tr').first().waitFor();

    const other = await context.newPage();
    await other.route(/\/api\/v1\/users\/me/, (route) => route.abort('connectionrefused'));
    await other.goto('/dashboard#/tags');
    const check = other.getByRole('alert').filter({ hasText: 'Your session could not be checked' });
    await check.waitFor();
    await other.unroute(/\/api\/v1\/users\/me/);
    await check.getByRole('button', { name: 'Retry' }).click();
    await other.getByRole('button', { name: 'Sign out' }).waitFor();

    expect(await other.getByRole('table').count()).toBeLessThanOrEqual(1);
    await context.close();
  }, 60_000);
});

/**
 * The dashboard in a real browser (Debian's chromium, playwright-core) against the local server
 * under test: sign in and out, the records explorer (filter, sort, search, the URL round trip),
 * the editor (a 422 shown on its field, then a create; a 412 from a second browser), API keys
 * (created, shown once, copied, revoked, then refused), axe-core on every page, keyboard-only
 * use, and screenshots of every page at 1280×800 and 390×844 in both themes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl } from '../../support/http.js';
import { newTenant, OPERATOR, type TestTenant } from '../../support/identity.js';
import { expectAccessible, launch, newContext, SCREENSHOTS, screenshots, settled, signIn, viewShown, watch, type StorageState } from './browser.js';

let browser: Browser;
let tenant: TestTenant;
let state: StorageState;
const created: string[] = [];

async function createTask(body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await api('POST', '/api/v1/tasks', { cookie: tenant.admin.cookie, body });
  expect(res.status).toBe(201);
  created.push(res.body.data.id);
  return res.body.data;
}

/** The text of every cell of one column of the explorer's table. */
async function column(page: Page, name: string): Promise<string[]> {
  const headers = await page.getByRole('table').locator('thead th').allInnerTexts();
  const index = headers.findIndex((h) => h.replace(/[▲▼]/g, '').trim() === name);
  return page.getByRole('table').locator(`tbody tr td:nth-child(${index + 1})`).allInnerTexts();
}

beforeAll(async () => {
  browser = await launch();
  tenant = await newTenant();
  const statuses = ['todo', 'in_progress', 'completed'];
  for (let i = 0; i < 12; i++) {
    await createTask({ title: `${i % 2 ? 'Alpha' : 'Beta'} task ${String(i).padStart(2, '0')}`, status: statuses[i % 3], priority: i % 2 ? 'high' : 'low' });
  }
  const context = await newContext(browser);
  const page = await context.newPage();
  await signIn(page, tenant.admin.email, tenant.admin.password);
  state = await context.storageState();
  await context.close();
}, 120_000);

afterAll(async () => {
  if (tenant && created.length) await api('DELETE', '/api/v1/tasks', { cookie: tenant.admin.cookie, body: { ids: created.slice(0, 100) } });
  await browser?.close();
});

describe('signing in and out', () => {
  it('signs in with Email and Password, shows the navigation, and signs out', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const problems = watch(page, [401]);

    await signIn(page, tenant.admin.email, tenant.admin.password);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'tasks', exact: true }).waitFor();

    for (const slug of ['tasks', 'products', 'comments', 'tags', 'orders', 'customers']) expect(await nav.getByRole('link', { name: slug, exact: true }).count()).toBe(1);
    for (const name of ['API keys', 'Webhooks', 'Files']) expect(await nav.getByRole('link', { name, exact: true }).count()).toBe(1);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const after = await context.request.get('/api/v1/users/me');
    expect(after.status()).toBe(401);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('refuses a wrong password with the API error text', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto('/dashboard');
    await page.getByLabel('Email').fill(tenant.admin.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/invalid|incorrect|wrong/i);
    await context.close();
  }, 60_000);

  it('brings the sign-in page back when the session ends, then returns to the page the user was on', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    // Signed in on the view itself: no other page's request is still on its way when the session ends.
    await signIn(page, tenant.admin.email, tenant.admin.password, '#/tasks?sort=title&order=asc');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'tasks', exact: true }).waitFor();
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    await settled(page);
    // The session ends elsewhere (logged out with the same cookie).
    const logout = await context.request.post('/api/v1/auth/logout');
    expect(logout.status()).toBe(200);

    await page.getByRole('button', { name: 'title', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('status').innerText()).toContain('session has ended');
    await page.getByLabel('Email').fill(tenant.admin.email);
    await page.getByLabel('Password').fill(tenant.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table').waitFor();

    expect(new URL(page.url()).hash).toBe('#/tasks?sort=title&order=desc');
    await context.close();
  }, 60_000);

  it('keeps the new session when a request sent with the ended one is answered 401 after signing in again', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    let loggedOut!: () => void;
    let signedInAgain!: () => void;
    const afterLogout = new Promise<void>((resolve) => (loggedOut = resolve));
    const afterSignIn = new Promise<void>((resolve) => (signedInAgain = resolve));
    let held = 0;
    // The first page's first request (its OPTIONS) reaches the server only once the session has
    // ended, and its 401 reaches the page only after the user signed in again: a slow request
    // of a page the user had left.
    await page.route(/\/api\/v1\/comments/, async (route) => {
      if (held++) return route.continue();
      await afterLogout;
      const response = await route.fetch();
      await afterSignIn;
      await route.fulfill({ response });
    });
    const stale = page.waitForResponse((r) => /\/api\/v1\/comments/.test(r.url()) && r.status() === 401, { timeout: 55_000 });
    await signIn(page, tenant.admin.email, tenant.admin.password, '#/comments');
    await page.goto('/dashboard#/tasks');
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    await settled(page);
    await context.request.post('/api/v1/auth/logout');
    loggedOut();
    // A new view asks the server again; a hash change, not a click, because the page may already
    // be re-rendering (or showing the sign-in form) by the time the session has ended.
    await page.evaluate(() => { location.hash = '#/tasks?sort=title&order=asc'; });
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(tenant.admin.email);
    await page.getByLabel('Password').fill(tenant.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table').locator('tbody tr').first().waitFor();

    signedInAgain();
    await stale;
    // Whatever the page would do with that answer, it has done within a second.
    await page.waitForTimeout(1000);
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    expect(await page.getByRole('table').count()).toBe(1);
    await context.close();
  }, 60_000);
});

describe('the records explorer', () => {
  it('filters, sorts and searches, keeps the view in the URL, and shows the same view from that URL', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto('/dashboard#/tasks');
    await page.getByRole('table').waitFor();

    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Filter 1 field').selectOption('priority');
    await page.getByLabel('Filter 1 operator').selectOption('$eq');
    await page.getByLabel('Filter 1 value').fill('high');
    await page.getByRole('searchbox', { name: 'Search' }).fill('alpha');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/filter=/);
    await page.getByRole('button', { name: 'title', exact: true }).click();
    await page.waitForURL(/sort=title/);
    // The URL changes before the sorted page arrives: wait for the six rows in title order.
    await expect.poll(async () => { const shown = await column(page, 'title'); return shown.length === 6 && shown.join() === [...shown].sort().join(); }).toBe(true);
    const titles = await column(page, 'title');

    expect(titles).toEqual([...titles].sort());
    expect(titles.every((t) => t.startsWith('Alpha'))).toBe(true);
    expect(new Set(await column(page, 'priority'))).toEqual(new Set(['high']));
    expect(await page.getByText('6 records match this view').count()).toBe(1);

    // Descending on a second click; then the URL alone, in a fresh page, gives the same rows.
    await page.getByRole('button', { name: 'title', exact: true }).click();
    await page.waitForURL(/order=desc/);
    await expect.poll(() => column(page, 'title')).toEqual([...titles].reverse());
    const url = page.url();
    const fresh = await context.newPage();
    await fresh.goto(url);
    await fresh.getByRole('table').locator('tbody tr').first().waitFor();
    expect(await column(fresh, 'title')).toEqual([...titles].reverse());
    expect(await fresh.getByLabel('Filter 1 value').inputValue()).toBe('high');
    expect(await fresh.getByRole('searchbox', { name: 'Search' }).inputValue()).toBe('alpha');

    // The request panel: the same request as curl and as a typed-client call, with its cost.
    await fresh.getByText('Request for this view').click();
    const panel = await fresh.locator('.request-panel').innerText();
    expect(panel).toContain('curl -H "Authorization: Bearer $API_KEY"');
    expect(panel).toContain("api.GET(\"/api/v1/tasks\"");
    expect(panel).toMatch(/rcu=/);
    expect(panel).toMatch(/total;dur=/);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('pages with the cursor, next and previous, with the total', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    await page.goto('/dashboard#/tasks?limit=10');
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    const first = await column(page, 'id');

    await page.getByRole('button', { name: 'Next →' }).click();
    await page.waitForURL(/cursor=/);
    await expect.poll(async () => (await column(page, 'id'))[0]).not.toBe(first[0]);
    const second = await column(page, 'id');
    await page.getByRole('button', { name: '← Previous' }).click();
    await expect.poll(() => column(page, 'id')).toEqual(first);

    expect(first).toHaveLength(10);
    expect(second.length).toBeGreaterThan(0);
    expect(second.some((id) => first.includes(id))).toBe(false);
    expect(await page.getByText(/^\d+ records$/).innerText()).toMatch(/^1[2-9]|[2-9]\d records$/);
    await context.close();
  }, 60_000);
});

describe('the record editor', () => {
  it('shows the server\'s 422 on the field as its description, then creates the record', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page, [422]);
    await page.goto('/dashboard#/tasks');
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'New' }).click();
    // By role and exact name: the table's "Edit title of …" and "Resize title" controls carry the word too.
    const title = page.getByRole('textbox', { name: 'title', exact: true });
    await title.waitFor();
    await page.getByRole('textbox', { name: 'description', exact: true }).fill('Written in the browser');
    await page.getByRole('button', { name: 'Save' }).click();

    await expect.poll(() => title.getAttribute('aria-invalid')).toBe('true');
    const description = await title.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')!)!.textContent);
    expect(description).toMatch(/required/i);

    await title.fill('Created in the browser');
    await page.getByLabel('priority').selectOption('high');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/#\/tasks\/tsk_/);
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
    created.push(id);
    const stored = await api('GET', `/api/v1/tasks/${id}`, { cookie: tenant.admin.cookie });

    expect(stored.body.data).toMatchObject({ title: 'Created in the browser', description: 'Written in the browser', priority: 'high' });
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('explains a 412 when another browser saved first, and saves after reload and re-apply', async () => {
    const task = await createTask({ title: 'Contested', priority: 'low' });
    const first = await newContext(browser, { storageState: state });
    const second = await newContext(browser, { storageState: state });
    const a = await first.newPage();
    const b = await second.newPage();
    await a.goto(`/dashboard#/tasks/${task.id}`);
    await b.goto(`/dashboard#/tasks/${task.id}`);
    await a.getByLabel('title').waitFor();
    await b.getByLabel('title').waitFor();

    await b.getByLabel('priority').selectOption('medium');
    await b.getByRole('button', { name: 'Save' }).click();
    await b.getByText(`Saved ${task.id}.`).waitFor();
    await a.getByLabel('title').fill('Contested, edited in A');
    await a.getByRole('button', { name: 'Save' }).click();
    const conflict = a.getByRole('alert').filter({ hasText: 'changed by someone else' });
    await conflict.waitFor();
    await a.getByRole('button', { name: 'Reload and re-apply my changes' }).click();
    await expect.poll(() => a.getByLabel('priority').inputValue()).toBe('medium');
    expect(await a.getByLabel('title').inputValue()).toBe('Contested, edited in A');
    await a.getByRole('button', { name: 'Save' }).click();
    await a.getByText(`Saved ${task.id}.`).waitFor();
    const stored = await api('GET', `/api/v1/tasks/${task.id}`, { cookie: tenant.admin.cookie });

    expect(stored.body.data).toMatchObject({ title: 'Contested, edited in A', priority: 'medium' });
    await first.close();
    await second.close();
  }, 60_000);

  it('deletes a record after confirmation, and several at once from the explorer', async () => {
    const one = await createTask({ title: 'Delete me alone' });
    const two = await createTask({ title: 'Zz bulk one' });
    const three = await createTask({ title: 'Zz bulk two' });
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    await page.goto(`/dashboard#/tasks/${one.id}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/#\/tasks$/);
    await page.goto('/dashboard#/tasks?search=bulk');
    await viewShown(page, 2);
    await page.getByLabel(`Select ${two.id}`).check();
    await page.getByLabel(`Select ${three.id}`).check();
    await page.getByRole('button', { name: 'Delete selected (2)' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted 2 tasks —').waitFor();

    for (const id of [one.id, two.id, three.id]) expect((await api('GET', `/api/v1/tasks/${id}`, { cookie: tenant.admin.cookie })).status).toBe(404);
    await context.close();
  }, 60_000);
});

describe('live updates', () => {
  it('shows a record another client creates, and marks records changed and deleted elsewhere', async () => {
    const changed = await createTask({ title: 'Will change' });
    const removed = await createTask({ title: 'Will go' });
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    await page.goto('/dashboard#/tasks');
    await page.getByText('Live: changes appear as they happen').waitFor();

    const fresh = await createTask({ title: 'Arrived live' });
    await api('PATCH', `/api/v1/tasks/${changed.id}`, { cookie: tenant.admin.cookie, body: { title: 'Changed live' } });
    await api('DELETE', `/api/v1/tasks/${removed.id}`, { cookie: tenant.admin.cookie });
    const row = (id: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name: id }) });

    await row(fresh.id).filter({ hasText: 'Arrived live' }).filter({ hasText: 'created' }).waitFor({ timeout: 15_000 });
    await row(changed.id).filter({ hasText: 'Changed live' }).filter({ hasText: 'updated' }).waitFor({ timeout: 15_000 });
    await row(removed.id).filter({ hasText: 'deleted' }).waitFor({ timeout: 15_000 });
    expect(await row(removed.id).getAttribute('class')).toContain('live-deleted');
    await context.close();
  }, 60_000);
});

describe('API keys', () => {
  it('creates a key shown once, copies it, revokes it, and the API then refuses it', async () => {
    const context = await newContext(browser, { storageState: state });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const page = await context.newPage();
    await page.goto('/dashboard#/keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Browser key');
    await dialog.getByLabel('tasks:read').check();
    await dialog.getByRole('button', { name: 'Create' }).click();
    const key = (await page.getByLabel('New key').innerText()).trim();
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    const clipboard = await page.evaluate(() => navigator.clipboard.readText());
    const before = await api('GET', '/api/v1/tasks', { apiKey: key });

    expect(key).toMatch(/^sk_live_[A-Za-z0-9_-]{40}$/);
    expect(clipboard).toBe(key);
    expect(before.status).toBe(200);

    // Shown once: a reload lists the key by its prefix only.
    await page.reload();
    await page.getByRole('cell', { name: 'Browser key', exact: true }).waitFor();
    expect(await page.getByLabel('New key').count()).toBe(0);
    expect(await page.content()).not.toContain(key);

    await page.getByRole('button', { name: 'Revoke Browser key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Revoked Browser key').waitFor();
    const after = await api('GET', '/api/v1/tasks', { apiKey: key });

    expect(after.status).toBe(401);
    await context.close();
  }, 60_000);
});

describe('import and export', () => {
  it('imports a CSV with a preview and reports the one bad row from the server', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    await page.goto('/dashboard#/products');
    await page.getByRole('button', { name: 'Import' }).click();
    const dialog = page.getByRole('dialog');
    const csv = ['name,price,status,category', 'Imported lamp,19.5,active,home', 'Imported chair,-3,active,home', 'Imported desk,120,inactive,office'].join('\n');
    await dialog.getByLabel('CSV or JSON file').setInputFiles({ name: 'products.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await dialog.getByRole('table', { name: 'Preview of products.csv' }).waitFor();
    expect(await dialog.getByRole('table').locator('tbody tr').count()).toBe(3);
    // Before it starts: what it takes of the session's window, and about how long.
    expect(await dialog.locator('.plan').innerText()).toMatch(/^3 records in batches of 100: 1 request of your session's rate-limit window, about \d+ s\./);
    await dialog.getByRole('button', { name: 'Import 3 records' }).click();
    await dialog.getByText('2 created, 1 refused.').waitFor();
    const refused = await dialog.getByRole('list', { name: 'Refused rows' }).innerText();
    const bar = dialog.getByRole('progressbar');
    const barValue = [await bar.getAttribute('value'), await bar.getAttribute('max')];
    await dialog.getByRole('button', { name: 'Close' }).click();
    const listed = await api('GET', `/api/v1/products?search=Imported`, { cookie: tenant.admin.cookie });

    expect(refused).toMatch(/^Row 2: .*price/);
    expect(barValue).toEqual(['3', '3']);
    expect(listed.body.data.map((p: { name: string }) => p.name).sort()).toEqual(['Imported desk', 'Imported lamp']);
    await api('DELETE', '/api/v1/products', { cookie: tenant.admin.cookie, body: { ids: listed.body.data.map((p: { id: string }) => p.id) } });
    await context.close();
  }, 60_000);

  it('exports the current view as CSV and as NDJSON', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    await page.goto(`/dashboard#/tasks?search=alpha&sort=title&order=asc`);
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    const exportAs = async (format: 'CSV' | 'NDJSON') => {
      await page.getByRole('button', { name: `Export ${format}` }).click();
      const dialog = page.getByRole('dialog', { name: `Export tasks as ${format}` });
      const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Start export' }).click()]);
      await dialog.getByRole('button', { name: 'Close' }).click();
      return download;
    };
    const csv = await exportAs('CSV');
    const ndjson = await exportAs('NDJSON');
    const { readFile } = await import('node:fs/promises');
    const csvLines = (await readFile((await csv.path())!, 'utf8')).trim().split(/\r?\n/);
    const records = (await readFile((await ndjson.path())!, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { title: string });

    expect(csv.suggestedFilename()).toMatch(/^tasks-.*\.csv$/);
    // The admin CLI's columns (test/functions/dashboard/form.test.ts holds them to it): every field, lists of ids included.
    expect(csvLines[0]).toBe('id,title,description,status,priority,assigneeId,tagIds,createdAt,updatedAt');
    expect(records.length).toBe(csvLines.length - 1);
    expect(records.length).toBeGreaterThanOrEqual(6);
    expect(records.every((r) => /alpha/i.test(r.title))).toBe(true);
    expect(records.map((r) => r.title)).toEqual(records.map((r) => r.title).sort());
    await context.close();
  }, 60_000);
});

describe('export of a large view', () => {
  const SEEDED = 1050;
  let ids: string[] = [];

  beforeAll(async () => {
    // Seeded through the import endpoint, 100 a request.
    for (let offset = 0; offset < SEEDED; offset += 100) {
      const items = Array.from({ length: Math.min(100, SEEDED - offset) }, (_, i) => ({ name: `Export ${String(offset + i).padStart(4, '0')}` }));
      const res = await api('POST', '/api/v1/import/tags', { cookie: tenant.admin.cookie, body: { items, options: { skipInvalid: false } } });
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    }
    for (let page = 1; ids.length < SEEDED; page++) {
      const res = await api('GET', `/api/v1/tags?limit=100&page=${page}`, { cookie: tenant.admin.cookie });
      if (!res.body.data.length) break;
      ids.push(...res.body.data.map((t: { id: string }) => t.id));
    }
    expect(ids).toHaveLength(SEEDED);
  }, 120_000);

  afterAll(async () => {
    for (let i = 0; i < ids.length; i += 100) await api('DELETE', '/api/v1/tags', { cookie: tenant.admin.cookie, body: { ids: ids.slice(i, i + 100) } });
    ids = [];
  }, 120_000);

  it('exports every record of a view of more than 1,000, once each, page by page with its cost shown first and a progress bar', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);
    const lists: string[] = [];
    page.on('request', (r) => r.method() === 'GET' && new URL(r.url()).pathname === '/api/v1/tags' && lists.push(r.url()));
    await page.goto('/dashboard#/tags?sort=name&order=desc');
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    lists.length = 0;

    await page.getByRole('button', { name: 'Export NDJSON' }).click();
    const dialog = page.getByRole('dialog', { name: 'Export tags as NDJSON' });
    const plan = await dialog.innerText();
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'export-plan-desktop-light.png') });
    await expectAccessible(page, 'export dialog');
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), dialog.getByRole('button', { name: 'Start export' }).click()]);
    await dialog.getByText(`Exported ${SEEDED} records in 11 requests`).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'export-done-desktop-light.png') });
    const bar = dialog.getByRole('progressbar');
    const barValue = [await bar.getAttribute('value'), await bar.getAttribute('max')];
    const { readFile } = await import('node:fs/promises');
    const names = (await readFile((await download.path())!, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { id: string; name: string });

    expect(plan).toContain(`${SEEDED} records in this view`);
    expect(plan).toMatch(/11 requests of your session's rate-limit window, about \d+ s\./);
    expect(names).toHaveLength(SEEDED);
    expect(new Set(names.map((r) => r.id))).toEqual(new Set(ids));
    expect(names.map((r) => r.name)).toEqual([...names.map((r) => r.name)].sort().reverse());
    expect(barValue).toEqual([String(SEEDED), String(SEEDED)]);
    expect(lists).toHaveLength(11);
    expect(lists.every((u) => new URL(u).searchParams.get('limit') === '100' && new URL(u).searchParams.get('sort') === 'name')).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('cancels an export on request: nothing is saved and no more pages are read', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    let downloads = 0;
    page.on('download', () => downloads++);
    let lists = 0;
    // Each page answered half a second late, so there is time to cancel mid-way.
    await page.route(/\/api\/v1\/tags\?/, async (route) => {
      lists++;
      await new Promise((r) => setTimeout(r, 500));
      await route.continue();
    });
    await page.goto('/dashboard#/tags');
    await page.getByRole('table').locator('tbody tr').first().waitFor();
    lists = 0;

    await page.getByRole('button', { name: 'Export CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Export tags as CSV' });
    await dialog.getByRole('button', { name: 'Start export' }).click();
    await dialog.getByText(/^(1|2)00 of 1050 records exported/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel export' }).click();
    await dialog.getByText(/Export cancelled after \d+ records; nothing was saved\./).waitFor();
    const readBeforeWait = lists;
    await page.waitForTimeout(1500);

    expect(downloads).toBe(0);
    expect(lists).toBe(readBeforeWait);
    expect(lists).toBeLessThan(5);
    await context.close();
  }, 60_000);
});

describe('files', () => {
  it('uploads a dropped file with a progress bar, lists it, opens it and deletes it', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto('/dashboard#/files');
    await page.getByText('No files yet').waitFor();
    // Every value the progress bar shows, as the page draws it.
    await page.evaluate(() => {
      (window as unknown as { seen: number[] }).seen = [];
      new MutationObserver(() => {
        const bar = document.querySelector('progress');
        if (bar) (window as unknown as { seen: number[] }).seen.push(Number(bar.getAttribute('value')));
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    // A 2 MB PDF, dropped on the drop zone.
    const dataTransfer = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([`%PDF-1.4\n${'%'.repeat(2 * 1024 * 1024)}\n%%EOF\n`], 'dropped report.pdf', { type: 'application/pdf' }));
      return dt;
    });
    await page.dispatchEvent('.dropzone', 'drop', { dataTransfer });
    await page.getByText('Uploaded dropped report.pdf').waitFor({ timeout: 20_000 });
    const link = page.getByRole('link', { name: 'dropped report.pdf' });
    await link.waitFor();
    const seen = await page.evaluate(() => (window as unknown as { seen: number[] }).seen);
    const opened = await context.request.get(await link.getAttribute('href') as string);

    expect(seen.length).toBeGreaterThan(0);
    expect(Math.max(...seen)).toBeGreaterThan(0);
    expect(opened.status()).toBe(200);
    expect((await opened.body()).subarray(0, 8).toString()).toBe('%PDF-1.4');

    await page.getByRole('button', { name: 'Delete dropped report.pdf' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No files yet').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('uploads a file above the Lambda ceiling through the presigned flow, straight to the object store, and serves it byte-exact', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);
    const posts: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && posts.push(r.url()));
    // A 6 MiB PDF of random bytes: over the 4.4 MiB one multipart request may carry.
    const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(6 * 1024 * 1024), Buffer.from('\n%%EOF\n')]);
    await page.goto('/dashboard#/files');
    await page.getByRole('heading', { name: 'Files' }).waitFor();
    await settled(page);
    // The upload slowed to ~4 MB/s, so the progress bar is drawn (and photographed) mid-transfer.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 4 * 1024 * 1024 });

    await page.getByLabel('Drop a file here, or choose one').setInputFiles({ name: 'large scan.pdf', mimeType: 'application/pdf', buffer: bytes });
    const bar = page.getByRole('progressbar');
    await expect.poll(async () => Number(await bar.getAttribute('value').catch(() => '0')), { timeout: 20_000, interval: 50 }).toBeGreaterThan(0.2);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'files-uploading-desktop-light.png') });
    await page.getByText('Uploaded large scan.pdf (6.0 MiB)').waitFor({ timeout: 30_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'large scan.pdf' }) });
    await row.waitFor();
    const rowText = await row.innerText();
    await expectAccessible(page, 'files with a file');
    const href = (await row.getByRole('link').getAttribute('href'))!;
    const opened = await context.request.get(href);
    const body = await opened.body();
    const storageOrigin = new URL(posts.find((u) => !u.startsWith(baseUrl()))!).origin;
    const csp = (await context.request.get('/dashboard')).headers()['content-security-policy'];

    expect(posts.filter((u) => u.startsWith(baseUrl())).map((u) => new URL(u).pathname)).toEqual(['/api/v1/upload/presign', '/api/v1/upload/complete']);
    expect(csp).toContain(`connect-src 'self' ${storageOrigin};`);
    expect(rowText).toContain('application/pdf');
    expect(rowText).toContain('6.0 MiB');
    expect(opened.status()).toBe(200);
    expect(body.length).toBe(bytes.length);
    expect(createHash('sha256').update(body).digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(problems).toEqual([]);

    await screenshots(browser, 'files-list', state, async (p) => {
      await p.goto('/dashboard#/files');
      await p.getByRole('link', { name: 'large scan.pdf' }).waitFor();
    });
    await page.getByRole('button', { name: 'Delete large scan.pdf' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No files yet').waitFor();
    await context.close();
  }, 120_000);
});

describe('settings', () => {
  it('saves preferences and tenant settings, adds a user and makes them an admin', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto('/dashboard#/settings');
    await page.getByLabel('Preferences', { exact: true }).fill('{"theme": {"density": "compact"}}');
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await page.getByText('Saved your preferences.').waitFor();
    await page.getByLabel('Settings', { exact: true }).fill('{"workflow": "kanban"}');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved the tenant settings.').waitFor();
    const email = `added-${Date.now()}@test.local`;
    await page.getByLabel('Email of the new user').fill(email);
    await page.getByLabel('Name of the new user').fill('Added in the browser');
    await page.getByLabel('Initial password').fill('added-password-1');
    await page.getByRole('button', { name: 'Add user' }).click();
    await page.getByText(`Added ${email}.`).waitFor();
    await page.getByLabel(`Role of ${email}`).selectOption('admin');
    await page.getByText(`${email} is now an admin.`).waitFor();
    const me = await api('GET', '/api/v1/users/me', { cookie: tenant.admin.cookie });
    const tenantNow = await api('GET', '/api/v1/tenants/me', { cookie: tenant.admin.cookie });
    const users = await api('GET', '/api/v1/users', { cookie: tenant.admin.cookie });

    expect(me.body.data.preferences).toEqual({ theme: { density: 'compact' } });
    expect(tenantNow.body.data.settings).toEqual({ workflow: 'kanban' });
    expect(users.body.data.find((u: { email: string }) => u.email === email)).toMatchObject({ role: 'admin', name: 'Added in the browser' });
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('lets the platform operator create a tenant', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, OPERATOR.email, OPERATOR.password, '#/settings');
    const email = `new-admin-${Date.now()}@test.local`;
    await page.getByLabel('Tenant name').fill('Made in the dashboard');
    await page.getByLabel('Admin email').fill(email);
    await page.getByLabel('Admin name').fill('First admin');
    await page.getByLabel('Admin password').fill('first-admin-password-1');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByText(/Created tenant Made in the dashboard \(ten_/).waitFor();
    const login = await api('POST', '/api/v1/auth/login', { body: { email, password: 'first-admin-password-1' } });

    expect(login.status).toBe(200);
    await context.close();
  }, 60_000);
});

describe('keyboard only', () => {
  it('signs in and creates a record without the mouse', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto('/dashboard#/tasks/new');
    await page.getByLabel('Email').waitFor();
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('email');
    await page.keyboard.type(tenant.admin.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(tenant.admin.password);
    await page.keyboard.press('Enter');
    await page.getByLabel('title').waitFor();
    // From the top of the form: Tab to the title field, type, Enter submits.
    await page.getByLabel('title').focus();
    await page.keyboard.type('Typed with the keyboard');
    await page.keyboard.press('Tab');
    await page.keyboard.type('No mouse involved');
    // Tab through the rest of the form to Save.
    for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Save'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/tasks\/tsk_/);
    created.push(decodeURIComponent(new URL(page.url()).hash.split('/')[2]));

    expect(await page.getByLabel('title').inputValue()).toBe('Typed with the keyboard');
    await context.close();
  }, 60_000);
});

describe('every page', () => {
  it('has no serious or critical accessibility violation (axe-core), and is photographed at both sizes in both themes', async () => {
    const task = await createTask({ title: 'Photographed task', description: 'For the screenshots' });
    const pages: [string, string, (p: Page) => Promise<void>][] = [
      ['sign-in', '', async (p) => void (await p.getByRole('button', { name: 'Sign in' }).waitFor())],
      ['explorer', '#/tasks', async (p) => void (await p.getByRole('table').locator('tbody tr').first().waitFor())],
      ['explorer-empty', '#/customers', async (p) => void (await p.getByText('No customers yet').waitFor())],
      ['editor-new', '#/tasks/new', async (p) => void (await p.getByLabel('title').waitFor())],
      ['editor-edit', `#/tasks/${task.id}`, async (p) => void (await p.getByLabel('title').waitFor())],
      ['keys', '#/keys', async (p) => void (await p.getByRole('heading', { name: 'API keys' }).waitFor())],
      ['files', '#/files', async (p) => void (await p.getByRole('heading', { name: 'Files' }).waitFor())],
      ['settings', '#/settings', async (p) => void (await p.getByRole('heading', { name: 'Users of the tenant' }).waitFor())],
    ];
    const files: string[] = [];
    for (const [name, hash, ready] of pages) {
      const signedIn = name !== 'sign-in';
      const context = await newContext(browser, signedIn ? { storageState: state } : {});
      const page = await context.newPage();
      await page.goto(`/dashboard${hash}`);
      await ready(page);
      await expectAccessible(page, name);
      await context.close();
      files.push(
        ...(await screenshots(browser, name, signedIn ? state : undefined, async (p) => {
          await p.goto(`/dashboard${hash}`);
          await ready(p);
        })),
      );
    }

    expect(files).toHaveLength(pages.length * 4);
  }, 180_000);
});

/**
 * Working in the explorer's table, in a real browser against the suite's server: references shown
 * by their records' labels (embedded by the LIST, or looked up in one batch for rows that arrived
 * live), a cell edited in place with If-Match (a 422 on the cell, a 412 reloaded and re-applied),
 * columns chosen, ordered and resized, a saved view reopened from its URL, the total following
 * live rows, notices kept to their page, and the page after sign-in.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, type TestTenant } from '../../support/identity.js';
import { expectAccessible, launch, newContext, screenshots, settled, signIn, signedInState, watch, type StorageState } from './browser.js';

let browser: Browser;
let tenant: TestTenant;
let state: StorageState;
const tags: { id: string; name: string }[] = [];

async function create(entity: string, body: Record<string, unknown>): Promise<{ id: string } & Record<string, unknown>> {
  const res = await api('POST', `/api/v1/${entity}`, { cookie: tenant.admin.cookie, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** The header texts of the explorer's table, in order (the select-all column left out). */
async function headers(page: Page): Promise<string[]> {
  const texts = await page.getByRole('table').locator('thead th').allInnerTexts();
  return texts.map((t) => t.replace(/[▲▼]/g, '').trim()).filter(Boolean);
}

const row = (page: Page, id: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name: id, exact: true }) });

beforeAll(async () => {
  browser = await launch();
  tenant = await newTenant();
  for (const name of ['urgent', 'backend']) tags.push((await create('tags', { name })) as { id: string; name: string });
  state = await signedInState(browser, tenant.admin.email, tenant.admin.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('names instead of ids', () => {
  it('shows references and relation lists by their labels, linked to the records, in the one LIST request of the view', async () => {
    const task = await create('tasks', { title: 'Labelled task', assigneeId: tenant.admin.id, tagIds: tags.map((t) => t.id) });
    await create('comments', { taskId: task.id, body: 'A comment on the labelled task' });
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);
    const calls: string[] = [];
    page.on('request', (r) => r.url().includes('/api/v1/') && calls.push(`${r.method()} ${new URL(r.url()).pathname}${new URL(r.url()).search}`));

    await page.goto('/dashboard#/tasks?search=Labelled');
    const shown = row(page, task.id);
    await shown.getByRole('link', { name: 'urgent' }).waitFor();
    const cells = await shown.innerText();
    const tagLink = await shown.getByRole('link', { name: 'backend' }).getAttribute('href');
    await page.goto('/dashboard#/comments');
    const commentRow = page.getByRole('row').filter({ hasText: 'A comment on the labelled task' });
    await commentRow.getByRole('link', { name: 'Labelled task' }).waitFor();
    const authorCell = await commentRow.innerText();

    expect(cells).toContain('Tenant Admin');
    expect(cells).not.toContain(tenant.admin.id);
    expect(cells).not.toContain(tags[0].id);
    expect(tagLink).toBe(`#/tags/${tags[1].id}`);
    expect(await commentRow.getByRole('link', { name: 'Labelled task' }).getAttribute('href')).toBe(`#/tasks/${task.id}`);
    expect(authorCell).toContain('Tenant Admin');
    // One LIST per view (the labels come embedded), and the descriptions once.
    const lists = calls.filter((c) => c.startsWith('GET /api/v1/tasks?') || c.startsWith('GET /api/v1/comments?'));
    expect(lists).toHaveLength(2);
    expect(lists[0]).toContain('include=assignee%2Ctags');
    expect(calls.filter((c) => /ids=/.test(c))).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('labels a row that arrived live with one batched look-up of the ids it has not seen', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const lookups: string[] = [];
    page.on('request', (r) => /[?&]ids=/.test(r.url()) && lookups.push(r.url()));
    await page.goto('/dashboard#/tasks');
    await page.getByText('Live: changes appear as they happen').waitFor();
    const fresh = await create('tags', { name: 'arrived-later' });

    const task = await create('tasks', { title: 'Live labelled', tagIds: [fresh.id, tags[0].id] });
    const shown = row(page, task.id);
    await shown.getByRole('link', { name: 'arrived-later' }).waitFor({ timeout: 15_000 });

    expect(await shown.getByRole('link', { name: 'urgent' }).count()).toBe(1);
    expect(lookups).toHaveLength(1);
    expect(new URL(lookups[0]).pathname).toBe('/api/v1/tags');
    expect(new URL(lookups[0]).searchParams.get('ids')).toBe(fresh.id);
    await context.close();
  }, 60_000);
});

describe('editing a cell in place', () => {
  it('saves with If-Match, shows a 422 on the cell, and after a 412 reloads and re-applies the change', async () => {
    const task = await create('tasks', { title: 'Edit me inline', priority: 'low' });
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page, [412, 422]);
    const patches: (string | null)[] = [];
    page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.headers()['if-match'] ?? null));
    await page.goto('/dashboard#/tasks?search=inline');
    await row(page, task.id).waitFor();

    // A 422: the title is required.
    await page.getByRole('button', { name: `Edit title of ${task.id}` }).click();
    const input = page.getByLabel(`title of ${task.id}`);
    await expect.poll(() => input.isEnabled()).toBe(true);
    await input.fill('');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => input.getAttribute('aria-invalid')).toBe('true');
    const described = await input.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')!)!.textContent);
    await expectAccessible(page, 'cell editor with a 422');

    // A 412: someone saves the record while the cell is open.
    await api('PATCH', `/api/v1/tasks/${task.id}`, { cookie: tenant.admin.cookie, body: { priority: 'high' } });
    await input.fill('Edited inline');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Changed by someone else' }).waitFor();
    await page.getByRole('button', { name: 'Reload and re-apply my change' }).click();
    await expect.poll(() => input.inputValue()).toBe('Edited inline');
    await expect.poll(() => input.isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(`Saved title of ${task.id}.`).waitFor();
    const stored = await api('GET', `/api/v1/tasks/${task.id}`, { cookie: tenant.admin.cookie });

    expect(described).toMatch(/required|must be/i);
    expect(stored.body.data).toMatchObject({ title: 'Edited inline', priority: 'high' });
    expect(await row(page, task.id).innerText()).toContain('Edited inline');
    expect(patches.length).toBe(3);
    expect(patches.every((tag) => /^"[^"]+"$/.test(tag ?? ''))).toBe(true);
    expect(patches[1]).not.toBe(patches[2]);
    expect(problems).toEqual([]);

    // The notice of the save belongs to the explorer: the API keys page does not show it.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByText(`Saved title of ${task.id}.`).count()).toBe(0);
    await context.close();
  }, 60_000);
});

describe('columns and saved views', () => {
  it('chooses, orders and resizes columns, saves the view, and the view comes back from its URL', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    await page.goto('/dashboard#/tasks?sort=title&order=asc');
    await page.getByRole('table').locator('tbody tr').first().waitFor();

    await page.getByRole('button', { name: 'Columns' }).click();
    const dialog = page.getByRole('dialog', { name: 'Columns' });
    await dialog.getByLabel('description', { exact: true }).uncheck();
    await dialog.getByLabel('tagIds', { exact: true }).uncheck();
    await dialog.getByRole('button', { name: 'Move title left' }).click();
    await expectAccessible(page, 'columns dialog');
    await dialog.getByRole('button', { name: 'Done' }).click();
    const handle = page.getByRole('separator', { name: 'Resize title' });
    await handle.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/widths=title/);
    const width = Number(/title:(\d+)/.exec(decodeURIComponent(page.url()))![1]);
    const chosen = await headers(page);

    await page.getByRole('button', { name: 'Save view' }).click();
    await page.getByRole('dialog').getByLabel('View name').fill('Short list');
    await page.getByRole('dialog').getByRole('button', { name: 'Save view' }).click();
    await page.getByText('Saved the view “Short list”').waitFor();
    const url = page.url();

    // The same browser: the view by its name; another browser: the same view from the link alone.
    const again = await context.newPage();
    await again.goto(url);
    await again.getByRole('table').locator('tbody tr').first().waitFor();
    const other = await newContext(browser, { storageState: state });
    const shared = await other.newPage();
    await shared.goto(url);
    await shared.getByRole('table').locator('tbody tr').first().waitFor();
    const titleWidth = await shared.getByRole('columnheader', { name: /^title/ }).evaluate((th) => Math.round(th.getBoundingClientRect().width));

    expect(chosen.slice(0, 2)).toEqual(['title', 'id']);
    expect(chosen).not.toContain('description');
    expect(chosen).not.toContain('tagIds');
    expect(await headers(again)).toEqual(chosen);
    expect(await again.getByLabel('Saved views').inputValue()).toBe('Short list');
    expect(await headers(shared)).toEqual(chosen);
    expect(Math.abs(titleWidth - width)).toBeLessThanOrEqual(2);
    await other.close();
    await context.close();
  }, 60_000);
});

describe('the live total', () => {
  it('goes up with a record created elsewhere and down with one deleted', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    await page.goto('/dashboard#/tags');
    await page.getByText('Live: changes appear as they happen').waitFor();
    const totalText = () => page.locator('.list-meta span').first().innerText();
    const before = Number(/^(\d+) record/.exec(await totalText())![1]);

    const tag = await create('tags', { name: 'counted live' });
    await expect.poll(totalText, { timeout: 15_000 }).toBe(`${before + 1} records`);
    await api('DELETE', `/api/v1/tags/${tag.id}`, { cookie: tenant.admin.cookie });
    await expect.poll(totalText, { timeout: 15_000 }).toBe(before === 1 ? '1 record' : `${before} records`);
    await context.close();
  }, 60_000);
});

describe('the page after sign-in', () => {
  it('is the entity with the most records the first time, then the last view visited', async () => {
    const user = { email: `landing-${Date.now()}@test.local`, password: 'landing-password-1' };
    const made = await api('POST', '/api/v1/users', { cookie: tenant.admin.cookie, body: { ...user, name: 'Landing', role: 'admin' } });
    expect(made.status).toBe(201);
    const context = await newContext(browser);
    const page = await context.newPage();

    await signIn(page, user.email, user.password);
    await page.waitForURL(/#\/[a-z]+/);
    const landed = new URL(page.url()).hash.slice(2);
    const totals = await Promise.all(['comments', 'customers', 'orders', 'products', 'tags', 'tasks'].map(async (slug) => [slug, (await api('GET', `/api/v1/${slug}?limit=1`, { cookie: tenant.admin.cookie })).body.pagination.total] as const));
    const most = Math.max(...totals.map(([, n]) => n));
    await page.goto('/dashboard#/tags?sort=name&order=desc');
    await page.getByRole('table').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor();
    await signIn(page, user.email, user.password);
    await page.waitForURL(/#\/tags/);

    expect(totals.find(([slug]) => slug === landed)?.[1]).toBe(most);
    expect(new URL(page.url()).hash).toBe('#/tags?sort=name&order=desc');
    await context.close();
  }, 60_000);
});

describe('at both sizes', () => {
  it('shows every column of the API keys on a phone, each cell with its name', async () => {
    const key = await api('POST', '/api/v1/api-keys', { cookie: tenant.admin.cookie, body: { name: 'Phone key', scopes: ['tasks:read'] } });
    expect(key.status).toBe(201);
    const context = await newContext(browser, { size: 'phone', storageState: state });
    const page = await context.newPage();
    await page.goto('/dashboard#/keys');
    const card = page.getByRole('row').filter({ hasText: 'Phone key' });
    await card.waitFor();
    const viewport = page.viewportSize()!;
    const cells = await card.locator('td').evaluateAll((tds) =>
      tds.map((td) => ({ label: getComputedStyle(td, '::before').content.replace(/"/g, ''), right: td.getBoundingClientRect().right, height: td.getBoundingClientRect().height })),
    );

    expect(cells.map((c) => c.label)).toEqual(['Name', 'Prefix', 'Scopes', 'Status', 'Expires', 'Last used', 'Requests (24 h / total)', 'Actions']);
    expect(cells.every((c) => c.right <= viewport.width && c.height > 0)).toBe(true);
    expect(await card.getByRole('button', { name: 'Revoke Phone key' }).isVisible()).toBe(true);
    await expectAccessible(page, 'keys on a phone');
    await context.close();
  }, 60_000);

  it('keeps the toolbar square and whole at 1280 and 390 px, with the budget shown, axe-clean, and loads no favicon.ico', async () => {
    await create('tasks', { title: 'Photographed in the table', assigneeId: tenant.admin.id, tagIds: [tags[0].id] });
    for (const size of ['desktop', 'phone'] as const) {
      const context = await newContext(browser, { size, storageState: state });
      const page = await context.newPage();
      const requested: string[] = [];
      page.on('request', (r) => requested.push(new URL(r.url()).pathname));
      await page.goto('/dashboard#/tasks');
      await page.getByRole('table').locator('tbody tr').first().waitFor();
      await settled(page);
      const viewport = page.viewportSize()!;
      const boxes = await Promise.all(
        [page.getByRole('searchbox', { name: 'Search' }), page.getByRole('button', { name: 'Apply' }), page.getByRole('button', { name: 'Add filter' }), page.getByLabel('Page size')].map(async (l) => ({
          box: (await l.boundingBox())!,
          radius: await l.evaluate((el) => parseFloat(getComputedStyle(el).borderTopLeftRadius)),
        })),
      );
      const quota = page.getByRole('img', { name: /Requests left in this rate-limit window/ });

      for (const { box, radius } of boxes) {
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
        expect(box.height).toBeGreaterThan(30);
        expect(radius, size).toBeLessThan(10);
      }
      expect(await quota.isVisible(), size).toBe(true);
      expect(requested).not.toContain('/favicon.ico');
      await expectAccessible(page, `explorer ${size}`);
      await context.close();
    }
    const icon = await api('GET', '/dashboard');
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/.exec(icon.text)![1];
    const served = await api('GET', `/${href}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    await screenshots(browser, 'explorer-table', state, async (p) => {
      await p.goto('/dashboard#/tasks');
      await p.getByRole('table').locator('tbody tr').first().waitFor();
    });
  }, 120_000);
});

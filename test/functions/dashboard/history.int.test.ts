/**
 * History in the console, in a real browser against the suite's server: a record's History tab
 * (its revisions newest first with their diffs, who and when, Load more, a version restored, a
 * stale ETag explained and reloaded), the Trash (a deleted record restored with its id), and the
 * Undo toast after a bulk update (reverted, a record changed in between left as it is). Axe-clean
 * at 1280 and 390 px.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, type TestTenant } from '../../support/identity.js';
import { expectAccessible, launch, newContext, screenshots, settled, signedInState, SIZES, viewShown, watch, type StorageState } from './browser.js';

let browser: Browser;
let tenant: TestTenant;
let state: StorageState;
let key: { id: string; key: string };

type Task = { id: string; title: string; status: string; description?: string };

async function createTask(body: Record<string, unknown>): Promise<Task> {
  const res = await api('POST', '/api/v1/tasks', { cookie: tenant.admin.cookie, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function patch(id: string, body: Record<string, unknown>, by: { apiKey?: string } = {}): Promise<void> {
  const res = await api('PATCH', `/api/v1/tasks/${id}`, { ...(by.apiKey ? { apiKey: by.apiKey } : { cookie: tenant.admin.cookie }), body });
  expect(res.status, res.text).toBe(200);
}

async function read(id: string): Promise<{ status: number; data: Task }> {
  const res = await api('GET', `/api/v1/tasks/${id}`, { cookie: tenant.admin.cookie });
  return { status: res.status, data: res.body.data };
}

/** The revision headings of the History tab, in the order shown. */
async function revisionHeadings(page: Page): Promise<string[]> {
  return page.locator('.revisions .revision h3').allInnerTexts();
}

const revision = (page: Page, n: number) => page.locator('.revisions .revision').filter({ has: page.getByRole('heading', { name: new RegExp(`^Revision ${n}:`) }) });

beforeAll(async () => {
  browser = await launch();
  tenant = await newTenant();
  const created = await api('POST', '/api/v1/api-keys', { cookie: tenant.admin.cookie, body: { name: 'history key', scopes: ['tasks:read', 'tasks:write'] } });
  expect(created.status, created.text).toBe(201);
  key = { id: created.body.data.id, key: created.body.data.key };
  state = await signedInState(browser, tenant.admin.email, tenant.admin.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** Ticks the rows of `records`, the searched view's only ones, once that view is on screen (viewShown). */
async function selectRows(page: Page, records: readonly { id: string }[]): Promise<void> {
  await viewShown(page, records.length);
  for (const r of records) await page.getByLabel(`Select ${r.id}`).check();
}

describe('the History tab', () => {
  it('lists the revisions newest first with their diffs and authors, loads more by cursor, and restores a version', async () => {
    const task = await createTask({ title: 'Draft', description: 'first' });
    await patch(task.id, { title: 'Second' });
    await patch(task.id, { status: 'in_progress' }, { apiKey: key.key });
    for (let i = 1; i <= 20; i++) await patch(task.id, { description: `note ${i}` });
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);

    await page.goto(`/dashboard#/tasks/${task.id}`);
    await page.getByRole('tab', { name: 'History' }).click();
    await revision(page, 23).waitFor();
    const firstPage = await revisionHeadings(page);
    await page.getByRole('button', { name: 'Load more' }).click();
    await revision(page, 1).waitFor();
    const all = await revisionHeadings(page);
    const byKey = await revision(page, 3).innerText();
    const bySession = await revision(page, 2).innerText();
    const created = await revision(page, 1).innerText();

    expect(page.url()).toContain('?tab=history');
    expect(await page.getByRole('tab', { name: 'History' }).getAttribute('aria-selected')).toBe('true');
    expect(firstPage).toHaveLength(20);
    expect(firstPage[0]).toMatch(/^Revision 23: Updated\s*current$/);
    expect(all.map((h) => Number(/^Revision (\d+)/.exec(h)![1]))).toEqual(Array.from({ length: 23 }, (_, i) => 23 - i));
    expect(byKey).toContain(`API key ${key.id}`);
    expect(byKey).toMatch(/status\s+todo\s+in_progress/);
    expect(bySession).toContain(`by user ${tenant.admin.id} (session, you)`);
    expect(bySession).toMatch(/title\s+Draft\s+Second/);
    expect(created).toContain('Revision 1: Created');
    expect(created).toMatch(/description\s+—\s+first/);
    expect(await revision(page, 23).getByRole('button', { name: 'Restore this version' }).count()).toBe(0);

    await revision(page, 2).getByRole('button', { name: 'Restore this version' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
    await page.getByText(`Restored ${task.id} to revision 2`).waitFor();
    await revision(page, 24).waitFor();
    const restored = await read(task.id);
    const restoreEntry = await revision(page, 24).innerText();
    await page.getByRole('tab', { name: 'Details' }).click();
    const titleShown = await page.getByLabel('title').inputValue();
    await page.getByRole('tab', { name: 'Details' }).press('ArrowRight');
    await revision(page, 24).waitFor();
    const focused = await page.evaluate(() => document.activeElement?.textContent);

    expect(restored.data).toMatchObject({ title: 'Second', status: 'todo', description: 'first' });
    expect(restoreEntry).toContain('Revision 24: Restored');
    expect(restoreEntry).toMatch(/description\s+note 20\s+first/);
    expect(titleShown).toBe('Second');
    expect(focused).toBe('History');
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('explains a restore refused with 412 (changed elsewhere since the record was opened), reloads, then restores', async () => {
    const task = await createTask({ title: 'Original' });
    await patch(task.id, { title: 'Edited' });
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page, [412]);
    const sent: (string | null)[] = [];
    page.on('request', (r) => r.url().endsWith('/restore') && sent.push(r.headers()['if-match'] ?? null));

    await page.goto(`/dashboard#/tasks/${task.id}?tab=history`);
    await revision(page, 2).waitFor();
    await patch(task.id, { title: 'Changed elsewhere' }, { apiKey: key.key });
    await revision(page, 1).getByRole('button', { name: 'Restore this version' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'changed by someone else' });
    await alert.waitFor();
    const explained = await alert.innerText();
    const untouched = await read(task.id);
    await alert.getByRole('button', { name: 'Reload the record and its history' }).click();
    await revision(page, 3).waitFor();
    await revision(page, 1).getByRole('button', { name: 'Restore this version' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
    await revision(page, 4).waitFor();

    expect(explained).toContain('412 Precondition Failed');
    expect(explained).toContain('Nothing was restored');
    expect(untouched.data.title).toBe('Changed elsewhere');
    expect((await read(task.id)).data.title).toBe('Original');
    expect(sent).toHaveLength(2);
    expect(sent.every((etag) => typeof etag === 'string' && etag.length > 2)).toBe(true);
    expect(sent[0]).not.toBe(sent[1]);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);
});

describe('the Trash', () => {
  it('lists a deleted record, shows what it held, and restores it with its id', async () => {
    const task = await createTask({ title: 'Deleted by mistake', status: 'in_progress' });
    expect((await api('DELETE', `/api/v1/tasks/${task.id}`, { cookie: tenant.admin.cookie })).status).toBe(200);
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);

    await page.goto('/dashboard#/tasks');
    await page.getByRole('button', { name: 'Trash' }).click();
    await page.getByRole('heading', { name: 'Trash: tasks' }).waitFor();
    const entry = page.getByRole('listitem').filter({ hasText: task.id });
    await entry.getByText('What it held').click();
    await entry.getByText('Deleted by mistake').waitFor();
    await entry.getByRole('button', { name: `Restore ${task.id}` }).click();
    await page.getByText(`Restored “Deleted by mistake” (${task.id})`).waitFor();
    const back = await read(task.id);
    const listed = await api('GET', '/api/v1/tasks?search=mistake', { cookie: tenant.admin.cookie });

    expect(await page.getByRole('listitem').filter({ hasText: task.id }).count()).toBe(0);
    expect(back.status).toBe(200);
    expect(back.data).toMatchObject({ id: task.id, title: 'Deleted by mistake', status: 'in_progress' });
    expect(listed.body.data.map((t: Task) => t.id)).toContain(task.id);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});

describe('the Undo toast', () => {
  it('reverts a bulk update made in the explorer, leaving a record changed in between as it is', async () => {
    const tasks = [await createTask({ title: 'Zq undo one' }), await createTask({ title: 'Zq undo two' }), await createTask({ title: 'Zq undo three' })];
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);

    await page.goto('/dashboard#/tasks?search=Zq');
    await selectRows(page, tasks);
    await page.getByRole('button', { name: 'Edit selected (3)' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Field to set').selectOption('status');
    // No value chosen yet: applying would clear the field, and the button says so.
    await dialog.getByRole('button', { name: 'Clear status on 3 records' }).waitFor();
    await dialog.getByLabel('status').selectOption('completed');
    await dialog.getByRole('button', { name: 'Update 3 records' }).click();
    const toast = page.locator('.toast');
    await toast.getByText('Updated 3 tasks —').waitFor();
    const afterBulk = await Promise.all(tasks.map((t) => read(t.id)));
    await patch(tasks[1].id, { priority: 'high' }, { apiKey: key.key });
    await toast.getByRole('button', { name: 'Undo' }).click();
    await page.getByText('Undone: 2 records reverted.').waitFor();
    const notice = await page.getByRole('status').filter({ hasText: 'Undone' }).innerText();
    const afterUndo = await Promise.all(tasks.map((t) => read(t.id)));

    expect(afterBulk.map((r) => r.data.status)).toEqual(['completed', 'completed', 'completed']);
    expect(afterUndo.map((r) => r.data.status)).toEqual(['todo', 'completed', 'todo']);
    expect(afterUndo[1].data).toMatchObject({ priority: 'high' });
    expect(notice).toContain(`1 left as it is`);
    expect(notice).toContain(tasks[1].id);
    expect(await toast.count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('brings back records deleted together from the explorer', async () => {
    const tasks = [await createTask({ title: 'Zr gone one' }), await createTask({ title: 'Zr gone two' })];
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);

    await page.goto('/dashboard#/tasks?search=Zr');
    await selectRows(page, tasks);
    await page.getByRole('button', { name: 'Delete selected (2)' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.locator('.toast').getByText('Deleted 2 tasks —').waitFor();
    const gone = await Promise.all(tasks.map((t) => read(t.id)));
    await page.locator('.toast').getByRole('button', { name: 'Undo' }).click();
    await page.getByText('Undone: 2 records reverted.').waitFor();
    await page.getByRole('link', { name: tasks[0].id }).waitFor();
    const back = await Promise.all(tasks.map((t) => read(t.id)));

    expect(gone.map((r) => r.status)).toEqual([404, 404]);
    expect(back.map((r) => r.status)).toEqual([200, 200]);
    expect(back.map((r) => r.data.title)).toEqual(['Zr gone one', 'Zr gone two']);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});

describe('accessibility', () => {
  it('has no serious or critical axe violation on the History tab, the Trash and the Undo toast, at 1280 and 390 px', async () => {
    const task = await createTask({ title: 'Axe history', description: 'a'.repeat(120) });
    await patch(task.id, { title: 'Axe history, edited', status: 'completed', description: 'b'.repeat(120) });
    const doomed = await createTask({ title: 'Axe trash' });
    expect((await api('DELETE', `/api/v1/tasks/${doomed.id}`, { cookie: tenant.admin.cookie })).status).toBe(200);
    const toasted = await createTask({ title: 'Zs axe toast' });
    for (const size of Object.keys(SIZES) as (keyof typeof SIZES)[]) {
      const context = await newContext(browser, { storageState: state, size });
      const page = await context.newPage();
      await page.goto(`/dashboard#/tasks/${task.id}?tab=history`);
      await revision(page, 2).waitFor();
      await expectAccessible(page, `history tab ${size}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, `history tab ${size} fits the width`).toBeLessThanOrEqual(SIZES[size].width);
      await page.goto(`/dashboard#/tasks/trash`);
      await page.getByRole('listitem').filter({ hasText: doomed.id }).waitFor();
      await expectAccessible(page, `trash ${size}`);
      await page.goto('/dashboard#/tasks?search=Zs');
      await selectRows(page, [toasted]);
      await page.getByRole('button', { name: 'Edit selected (1)' }).click();
      await page.getByRole('dialog').getByLabel('Field to set').selectOption('priority');
      await page.getByRole('dialog').getByLabel('priority').selectOption(size === 'desktop' ? 'high' : 'low');
      await page.getByRole('dialog').getByRole('button', { name: 'Update 1 record' }).click();
      await page.locator('.toast').getByText('Updated 1 task —').waitFor();
      await settled(page);
      await expectAccessible(page, `undo toast ${size}`);
      await context.close();
    }
    await screenshots(browser, 'history-tab', state, async (p) => {
      await p.goto(`/dashboard#/tasks/${task.id}?tab=history`);
      await revision(p, 2).waitFor();
    });
    await screenshots(browser, 'trash', state, async (p) => {
      await p.goto('/dashboard#/tasks/trash');
      await p.getByRole('listitem').filter({ hasText: doomed.id }).waitFor();
    });
  }, 180_000);
});

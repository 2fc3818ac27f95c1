/**
 * The explorer's charts in a real browser against the suite's server: the summary strip (records
 * per enum value) and the records created per day over the last 30 days show what the aggregate
 * endpoint answers for the same view, its filters included; their tables hold the same figures;
 * the request panel shows the aggregate requests and their cost; axe-clean at both sizes, in
 * both themes.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, type TestTenant } from '../../support/identity.js';
import { expectAccessible, launch, newContext, screenshots, settled, signedInState, watch, type StorageState } from './browser.js';

let browser: Browser;
let tenant: TestTenant;
let state: StorageState;

const TASKS = [
  ['todo', 'high'],
  ['todo', 'high'],
  ['todo', 'low'],
  ['in_progress', 'high'],
  ['in_progress', 'medium'],
  ['completed', 'low'],
] as const;

type Group = { key: Record<string, string>; count: number };

/** What the API answers for the aggregate, as records per value of `field`. */
async function apiCounts(field: string, filter?: Record<string, unknown>): Promise<Record<string, number>> {
  const query = new URLSearchParams({ groupBy: field, ...(filter ? { filter: JSON.stringify(filter) } : {}) });
  const response = await api('GET', `/api/v1/tasks/aggregate?${query}`, { cookie: tenant.admin.cookie });
  expect(response.status, response.text).toBe(200);
  return Object.fromEntries((response.body.data as Group[]).map((g) => [g.key[field], g.count]));
}

/** A chart's table, opened, as {row label: count}; values of 0 left out (the API has no group for them). */
async function tableOf(page: Page, caption: RegExp): Promise<Record<string, number>> {
  const figure = page.getByRole('figure').filter({ has: page.getByText(caption) });
  if ((await figure.getByRole('table').count()) === 0) await figure.getByText('Table', { exact: true }).click();
  const rows = await figure.getByRole('table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('th')!.textContent!, Number(tr.querySelector('td')!.textContent)] as const));
  return Object.fromEntries(rows.filter(([, n]) => n > 0));
}

beforeAll(async () => {
  browser = await launch();
  tenant = await newTenant();
  for (const [status, priority] of TASKS) {
    const res = await api('POST', '/api/v1/tasks', { cookie: tenant.admin.cookie, body: { title: `Charted ${status} ${priority}`, status, priority } });
    expect(res.status, res.text).toBe(201);
  }
  state = await signedInState(browser, tenant.admin.email, tenant.admin.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('the explorer’s charts', () => {
  it('show the counts per enum value and per day the aggregate endpoint answers, and follow the filters', async () => {
    const context = await newContext(browser, { storageState: state });
    const page = await context.newPage();
    const problems = watch(page);
    const aggregates: string[] = [];
    page.on('request', (r) => r.url().includes('/aggregate') && aggregates.push(new URL(r.url()).search));

    await page.goto('/dashboard#/tasks');
    await page.getByText('Records by status', { exact: true }).waitFor();
    await settled(page);
    const byStatus = await tableOf(page, /^Records by status$/);
    const byPriority = await tableOf(page, /^Records by priority$/);
    const perDay = await tableOf(page, /^Records created per day/);
    const today = new Date().toISOString().slice(0, 10);
    const days = await api('GET', `/api/v1/tasks/aggregate?interval=day&startDate=${today}&endDate=${today}`, { cookie: tenant.admin.cookie });
    const stripName = await page.getByRole('img', { name: /^Records by status:/ }).getAttribute('aria-label');

    expect(byStatus).toEqual(await apiCounts('status'));
    expect(byStatus).toEqual({ todo: 3, in_progress: 2, completed: 1 });
    expect(byPriority).toEqual(await apiCounts('priority'));
    expect(perDay).toEqual({ [today]: (days.body.data as Group[])[0].count });
    expect(perDay).toEqual({ [today]: TASKS.length });
    expect(stripName).toBe('Records by status: todo 3, in_progress 2, completed 1');
    expect(aggregates).toHaveLength(2);

    // A filter of the view: the charts ask again with it; sorting the same view asks nothing more.
    const filter = { priority: { $eq: 'high' } };
    await page.goto(`/dashboard#/tasks?filter=${encodeURIComponent(JSON.stringify(filter))}`);
    await page.getByText('Charts of this view').waitFor();
    await settled(page);
    await page.getByRole('button', { name: 'title' }).first().click();
    await settled(page);
    const filtered = await tableOf(page, /^Records by status$/);

    expect(filtered).toEqual(await apiCounts('status', filter));
    expect(filtered).toEqual({ todo: 2, in_progress: 1 });
    expect(aggregates).toHaveLength(4);
    expect(aggregates.slice(2).every((q) => new URLSearchParams(q).get('filter') === JSON.stringify(filter))).toBe(true);

    await page.getByText('Request for this view').click();
    const panel = await page.locator('.request-panel').innerText();
    expect(panel).toContain('Summary strip (aggregate)');
    expect(panel).toContain('/api/v1/tasks/aggregate?count=&groupBy=status%2Cpriority&filter=');
    expect(panel).toMatch(/Records over time \(aggregate\)[\s\S]*interval=day[\s\S]*X-Request-Cost: rcu=/);
    await expectAccessible(page, 'charts (filtered, tables open)');
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('are axe-clean and readable at 1280 and 390 px, in the light and dark themes', async () => {
    const files = await screenshots(browser, 'explorer-charts', state, async (page) => {
      await page.goto('/dashboard#/tasks');
      await page.getByText('Records by status', { exact: true }).waitFor();
      await expectAccessible(page, `charts ${page.viewportSize()?.width}`);
    });

    expect(files).toHaveLength(4);
  }, 90_000);
});

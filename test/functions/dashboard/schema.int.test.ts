/**
 * The schema page of an entity, read-only, in a real browser against the suite's server: the
 * fields with their rules, the relations, the caller's access and limit for anyone signed in; the
 * stored layout (access, write shards, indexes) and the migration's state and report for the
 * platform operator; where to read how to change it. axe-core and screenshots at both sizes.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, OPERATOR, type TestTenant } from '../../support/identity.js';
import { expectAccessible, launch, newContext, screenshots, signIn, watch, type StorageState } from './browser.js';

let browser: Browser;
let tenant: TestTenant;
let operator: StorageState;
let admin: StorageState;

async function stateOf(email: string, password: string): Promise<StorageState> {
  const context = await newContext(browser);
  await signIn(await context.newPage(), email, password, '#/keys');
  const state = await context.storageState();
  await context.close();
  return state;
}

beforeAll(async () => {
  browser = await launch();
  tenant = await newTenant();
  operator = await stateOf(OPERATOR.email, OPERATOR.password);
  admin = await stateOf(tenant.admin.email, tenant.admin.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('the schema page', () => {
  it("shows the platform operator the definition, the layout and the migration's state and report", async () => {
    const context = await newContext(browser, { storageState: operator });
    const page = await context.newPage();
    const problems = watch(page);
    await page.goto('/dashboard#/tasks');
    await page.getByRole('button', { name: 'Schema' }).click();
    await page.getByRole('heading', { name: 'Migration' }).waitFor();
    const fields = await page.getByRole('article', { name: 'Fields and rules' }).innerText();
    const access = await page.getByRole('article', { name: 'Access and limits' }).innerText();
    const indexes = await page.getByRole('article', { name: 'Indexes' }).innerText();
    const migration = await page.getByRole('article', { name: 'Migration' }).innerText();
    await expectAccessible(page, 'schema (operator)');

    expect(new URL(page.url()).hash).toBe('#/tasks/schema');
    expect(fields).toMatch(/title\s+string\s+yes\s+at most 200 characters/);
    expect(fields).toMatch(/status\s+enum\s+no\s+one of todo, in_progress, completed\s+"todo"/);
    expect(fields).toMatch(/tagIds\s+list of string.*ids of tags records \(relation tags\)/);
    expect(access).toMatch(/Write shards\s+1/);
    expect(access).toMatch(/Access\s+private/);
    expect(access).toMatch(/Searchable fields\s+description, title/);
    expect(indexes).toMatch(/status \(ready\)/);
    expect(migration).toMatch(/State\s+done/);
    expect(migration).toMatch(/Report/);
    expect(await page.getByText('docs/changing-entities.md').count()).toBe(1);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it("shows a tenant's admin the definition from OPTIONS, and says the layout is the operator's to see, with one request or none", async () => {
    const context = await newContext(browser, { storageState: admin });
    const page = await context.newPage();
    const problems = watch(page);
    const calls: string[] = [];
    page.on('request', (r) => r.url().includes('/api/v1/') && calls.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await page.goto('/dashboard#/products/schema');
    await page.getByRole('heading', { name: 'Fields and rules' }).waitFor();
    const access = await page.getByRole('article', { name: 'Access and limits' }).innerText();
    await expectAccessible(page, 'schema (tenant admin)');

    expect(access).toMatch(/Your rate limit\s+[\d,]+ requests per 1h/);
    expect(access).toMatch(/Delete\s+soft/);
    expect(await page.getByText('shown to the platform operator').count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Migration' }).count()).toBe(0);
    expect(calls.filter((c) => c !== 'GET /api/v1/users/me' && c !== 'GET /api/v1/openapi.json')).toEqual(['OPTIONS /api/v1/products']);
    expect(problems).toEqual([]);
    await context.close();
    await screenshots(browser, 'schema', operator, async (p) => {
      await p.goto('/dashboard#/tasks/schema');
      await p.getByRole('heading', { name: 'Migration' }).waitFor();
    });
  }, 90_000);
});

/**
 * The reference page in a real browser (Debian's chromium driven by playwright-core): it renders
 * every tag of the document and a "try it" call from the page reaches the API on the same origin.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl } from '../../support/http.js';
import { launch } from '../dashboard/browser.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe('the reference page at /api/docs', () => {
  it('renders every tag of the document and runs a call from the page against the same origin', async () => {
    const doc = (await api('GET', '/api/v1/openapi.json')).body as { tags: { name: string }[] };
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    // The browser's own favicon request is the one 404 a page cannot avoid.
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
    });
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(baseUrl()) && !r.url().startsWith('data:')) external.push(r.url());
    });

    await page.goto(`${baseUrl()}/api/docs`);
    await page.locator('.opblock-tag-section').first().waitFor({ timeout: 20_000 });
    const tags = await page.locator('.opblock-tag').evaluateAll((els) => els.map((e) => e.getAttribute('data-tag')));

    expect(tags).toEqual(doc.tags.map((t) => t.name));

    // Try it: list the public products from the page.
    await page.locator('.opblock-tag[data-tag="products"]').click();
    const operation = page.locator('#operations-products-listProducts');
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('button.try-out__btn').click();
    const call = page.waitForResponse((r) => r.url().startsWith(`${baseUrl()}/api/v1/products`) && r.request().method() === 'GET');
    await operation.locator('button.execute').click();
    const response = await call;
    await operation.locator('.live-responses-table tr.response .response-col_status').waitFor();

    expect(response.status()).toBe(200);
    expect((await response.json()).success).toBe(true);
    expect(await operation.locator('.live-responses-table tr.response .response-col_status').innerText()).toContain('200');
    expect(external).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('starts "Try it out" empty (examples and defaults in the descriptions) and names this deployment in the server entry', async () => {
    const page = await browser.newPage();
    await page.goto(`${baseUrl()}/api/docs`);
    await page.locator('.opblock-tag-section').first().waitFor({ timeout: 20_000 });
    const servers = await page.locator('.servers select option').allInnerTexts();
    await page.locator('.opblock-tag[data-tag="products"]').click();
    const operation = page.locator('#operations-products-listProducts');
    await operation.locator('.opblock-summary').first().click();
    const fields = operation.locator('tr[data-param-name="fields"]');
    const described = await fields.innerText();
    await operation.locator('button.try-out__btn').click();
    const filled = await operation
      .locator('.parameters input, .parameters select, .parameters textarea')
      .evaluateAll((els) => els.filter((e) => (e as HTMLInputElement).value !== '').map((e) => e.closest('tr')?.getAttribute('data-param-name')));
    const call = page.waitForRequest((r) => r.url().startsWith(`${baseUrl()}/api/v1/products`) && r.method() === 'GET');
    await operation.locator('button.execute').click();
    const request = await call;

    expect(servers).toEqual([`${baseUrl()} - This deployment`]);
    expect(filled).toEqual([]);
    expect(request.url()).toBe(`${baseUrl()}/api/v1/products`);
    expect(described).toMatch(/Example: name,price\./);
    await page.close();
  }, 60_000);
});

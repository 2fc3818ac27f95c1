/**
 * Debian's chromium driven by playwright-core against the local server under test, with the
 * helpers the dashboard's end-to-end tests share: sign in through the page, axe-core checks,
 * screenshots at both sizes and both themes under test-output/dashboard/.
 */
import { AxeBuilder } from '@axe-core/playwright';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { baseUrl } from '../../support/http.js';

/**
 * Debian's headless shell when installed (.ci/run installs it): the same Blink without the
 * browser's window machinery, about a fifth less CPU for the same pages; else the full browser.
 */
export const CHROMIUM = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
export const SCREENSHOTS = path.resolve('test-output/dashboard');

export const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

export async function launch(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('chromium is not installed: apt-get install chromium-headless-shell (or chromium; .ci/run installs the first)');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

export async function newContext(browser: Browser, options: { size?: keyof typeof SIZES; dark?: boolean; storageState?: StorageState; baseURL?: string } = {}): Promise<BrowserContext> {
  return browser.newContext({
    viewport: SIZES[options.size ?? 'desktop'],
    colorScheme: options.dark ? 'dark' : 'light',
    baseURL: options.baseURL ?? baseUrl(),
    ...(options.storageState ? { storageState: options.storageState } : {}),
  });
}

/** Problems a page must not have: script errors, CSP violations, failed requests other than the ones a test expects. */
export function watch(page: Page, allowedStatuses: number[] = []): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (4\d\d)/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 500 || (r.status() >= 400 && !allowedStatuses.includes(r.status()) && !r.url().endsWith('/favicon.ico'))) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  return problems;
}

export async function signIn(page: Page, email: string, password: string, hash = ''): Promise<void> {
  await page.goto(`/dashboard${hash}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The storage state of a session signed in at `hash`: contexts made with it start signed in. */
export async function signedInState(browser: Browser, email: string, password: string, hash = '#/tasks'): Promise<StorageState> {
  const context = await newContext(browser);
  await signIn(await context.newPage(), email, password, hash);
  const state = await context.storageState();
  await context.close();
  return state;
}

/** Every request of the page answered: nothing is marked busy. */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0, undefined, { timeout: 15_000 });
}

/**
 * A searched or filtered view's own records on screen: its count shown ("2 records match this
 * view") and nothing busy. Until then the table may still be the previous view's, whose rows a
 * tick would select just before the new list replaces them and clears the selection.
 */
export async function viewShown(page: Page, records: number): Promise<void> {
  await page.locator('.list-meta').getByText(`${records} ${records === 1 ? 'record' : 'records'} match this view`).waitFor();
  await settled(page);
}

/** axe-core over the whole page: no serious or critical violation. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  await settled(page);
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${label}: ${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`)).toEqual([]);
}

/** The page at both sizes and both themes, each a PNG named after the page. */
export async function screenshots(browser: Browser, name: string, storageState: StorageState | undefined, visit: (page: Page) => Promise<void>, baseURL?: string): Promise<string[]> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const files: string[] = [];
  for (const size of Object.keys(SIZES) as (keyof typeof SIZES)[]) {
    for (const dark of [false, true]) {
      const context = await newContext(browser, { size, dark, storageState, baseURL });
      const page = await context.newPage();
      await visit(page);
      await settled(page);
      const file = path.join(SCREENSHOTS, `${name}-${size}-${dark ? 'dark' : 'light'}.png`);
      await page.screenshot({ path: file, fullPage: false });
      files.push(file);
      await context.close();
    }
  }
  return files;
}

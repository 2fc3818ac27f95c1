/**
 * Console sign-in through an identity provider, in a real browser: `npm start` with DEV_OIDC=1
 * (the development OpenID Provider beside the API, on 127.0.0.1), a sample user of a tenant of
 * this file's own. Sign in through the provider's page, land in the console with a session, sign
 * out, then out of the provider too; axe-core on the console's pages, screenshots of them.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newTenant } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { expectAccessible, launch, newContext, SCREENSHOTS, settled, watch } from '../dashboard/browser.js';

const carol = { login: 'carol', password: `pw-${randomBytes(6).toString('hex')}`, email: `carol-${randomBytes(4).toString('hex')}@example.com`, name: 'Carol Console', role: 'admin' as const };

let browser: Browser;
let server: TestServer;

beforeAll(async () => {
  const tenant = await newTenant();
  [browser, server] = await Promise.all([
    launch(),
    startServer({
      dynamoEndpoint: inject('dynamoEndpoint'),
      env: { DEV_OIDC: '1', DEV_OIDC_PORT: '0', DEV_OIDC_CONFIG: JSON.stringify({ users: [{ ...carol, tenant: tenant.tenantId }] }) },
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function signInThroughProvider(page: Page): Promise<void> {
  await page.goto('/dashboard');
  await page.getByRole('link', { name: 'Sign in with Development IdP' }).click();
  await page.getByLabel('Username').fill(carol.login);
  await page.getByLabel('Password').fill(carol.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

describe('console sign-in through an identity provider', () => {
  it('npm start says how to use the development provider', async () => {
    // Printed after the line the harness waits for.
    for (let i = 0; i < 100 && !server.output().includes('grant_type=client_credentials'); i++) await new Promise((resolve) => setTimeout(resolve, 100));

    expect(server.output()).toMatch(/Development identity provider {2}http:\/\/127\.0\.0\.1:\d+/);
    expect(server.output()).toContain('grant_type=client_credentials');
  });

  it('signs in through the provider, into the same session as a password, and signs out of both', async () => {
    const context = await newContext(browser, { baseURL: server.url });
    const page = await context.newPage();
    const problems = watch(page, [401]);

    await page.goto('/dashboard');
    await page.getByRole('link', { name: 'Sign in with Development IdP' }).waitFor();
    await expectAccessible(page, 'sign-in with a provider');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'sign-in-provider-desktop-light.png') });
    await signInThroughProvider(page);
    await settled(page);
    const me = await context.request.get('/api/v1/users/me');
    const cookies = await context.cookies();
    await expectAccessible(page, 'signed in through a provider');

    expect((await me.json()).data).toMatchObject({ email: carol.email, role: 'admin', issuer: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    expect(cookies.find((c) => c.name === 'session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    expect(cookies.find((c) => c.name === 'oidc_flow')).toBeUndefined();
    await expect(page.getByText(carol.email).isVisible()).resolves.toBe(true);

    await page.getByRole('button', { name: 'Sign out' }).click();
    const offer = page.getByRole('link', { name: 'Sign out of Development IdP too' });
    await offer.waitFor();
    await expectAccessible(page, 'signed out, with the provider’s sign-out offered');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'signed-out-provider-desktop-light.png') });
    expect((await context.request.get('/api/v1/users/me')).status()).toBe(401);

    await offer.click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByRole('link', { name: 'Sign in with Development IdP' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    // The provider's session ended too: signing in again asks for the password.
    await page.getByRole('link', { name: 'Sign in with Development IdP' }).click();
    await page.getByLabel('Username').waitFor();

    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('says so when a sign-in does not complete', async () => {
    const context = await newContext(browser, { baseURL: server.url });
    const page = await context.newPage();

    // A callback this browser did not start (no flow cookie): back to the console, signed out.
    await page.goto('/api/v1/auth/oidc/callback?code=forged&state=forged');
    const alert = page.getByRole('alert');
    await alert.waitFor();

    expect(await alert.innerText()).toContain('did not succeed');
    expect(new URL(page.url()).search).toBe('');
    expect((await context.request.get('/api/v1/users/me')).status()).toBe(401);
    await context.close();
  }, 60_000);
});

/**
 * The dashboard's webhooks page in a real browser, against a server of its own that allows plain
 * http:// targets on loopback (ALLOW_INSECURE_WEBHOOKS=1): a webhook registered with a generated
 * secret, a test ping delivered to a real local receiver (signature checked) and visible in the
 * deliveries log with its response code, then deleted. axe-core and screenshots of the page.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { api, sessionCookieOf } from '../../support/http.js';
import { OPERATOR, uniqueEmail } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { expectAccessible, launch, newContext, screenshots, signIn, type StorageState } from './browser.js';

let browser: Browser;
let server: TestServer;
let dataDir: string;
let receiver: Server;
let receiverUrl: string;
const received: { body: string; signature: string | undefined }[] = [];
const admin = { email: uniqueEmail('admin'), name: 'Hooks Admin', password: 'hooks-password-1' };
let state: StorageState;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'dashboard-webhooks-'));
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { ALLOW_INSECURE_WEBHOOKS: '1', DATA_DIR: dataDir } });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      received.push({ body, signature: req.headers['x-webhook-signature'] as string | undefined });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const operator = sessionCookieOf(await api('POST', '/api/v1/auth/login', { baseUrl: server.url, body: OPERATOR }))!;
  const tenant = await api('POST', '/api/v1/tenants', { baseUrl: server.url, cookie: operator, body: { name: 'Hooks tenant', admin } });
  expect(tenant.status).toBe(201);
  browser = await launch();
  const context = await newContext(browser, { baseURL: server.url });
  await signIn(await context.newPage(), admin.email, admin.password);
  state = await context.storageState();
  await context.close();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the webhooks page', () => {
  it('registers a webhook, delivers a test ping to a real receiver, shows it in the log, and deletes the webhook', async () => {
    const context = await newContext(browser, { baseURL: server.url, storageState: state });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const page = await context.newPage();
    await page.goto('/dashboard#/webhooks');
    await page.getByText('No webhooks yet').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).waitFor();

    await page.getByRole('button', { name: 'Register webhook' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('URL').fill(receiverUrl);
    await dialog.getByLabel('task.created').check();
    const secret = await dialog.getByLabel('Secret').inputValue();
    await dialog.getByRole('button', { name: 'Register' }).click();
    await page.getByLabel('Webhook secret').waitFor();
    expect(await page.getByLabel('Webhook secret').innerText()).toBe(secret);

    await page.getByRole('button', { name: `Send a test to ${receiverUrl}` }).click();
    await page.getByText(/Test delivery to .*: succeeded \(200\)/).waitFor({ timeout: 15_000 });
    const log = page.getByRole('region', { name: `Deliveries to ${receiverUrl}` });
    await log.getByRole('cell', { name: 'webhook.test' }).waitFor();

    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0].body)).toMatchObject({ type: 'webhook.test' });
    expect(received[0].signature).toBe(createHmac('sha256', secret).update(received[0].body).digest('hex'));
    expect(await log.getByRole('row').nth(1).innerText()).toMatch(/succeeded\s+200/);

    await expectAccessible(page, 'webhooks');
    await screenshots(
      browser,
      'webhooks',
      state,
      async (p) => {
        await p.goto('/dashboard#/webhooks');
        await p.getByRole('button', { name: `Deliveries of ${receiverUrl}` }).click();
        await p.getByRole('cell', { name: 'webhook.test' }).waitFor();
      },
      server.url,
    );

    await page.getByRole('button', { name: `Delete the webhook to ${receiverUrl}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No webhooks yet').waitFor();
    await context.close();
  }, 120_000);
});

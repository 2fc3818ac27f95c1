/**
 * A storage connection reset during an upload: a server of its own stores through a TCP proxy in
 * front of an s3rver of the test's, and the proxy resets the connection carrying the first
 * PutObject. The upload is retried and answered as if nothing happened.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api } from '../../support/http.js';
import { newTenant, newUser, type TestUser } from '../../support/identity.js';
import { startServer, type TestServer } from '../../support/server.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { JPEG, multipart, PDF, PNG } from './files.js';

let directory: string;
let storage: S3rver;
let proxy: TcpProxy;
let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'storage-reset-'));
  storage = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true });
  const { port } = await storage.run();
  proxy = await startTcpProxy(`http://127.0.0.1:${port}`);
  server = await startServer({ dynamoEndpoint: inject('dynamoEndpoint'), env: { S3_ENDPOINT: proxy.url } });
  user = await newUser((await newTenant()).admin.cookie);
});

afterAll(async () => {
  await server?.stop();
  await proxy?.stop();
  await storage?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

function upload(path: string, parts: Parameters<typeof multipart>[0]) {
  const { body, contentType } = multipart(parts);
  return api('POST', path, { rawBody: body, headers: { 'Content-Type': contentType }, cookie: user.cookie, baseUrl: server.url });
}

async function storedBytes(url: string): Promise<Buffer> {
  const redirect = await fetch(`${server.url}${url}`, { headers: { Cookie: user.cookie }, redirect: 'manual' });
  expect(redirect.status).toBe(302);
  const object = await fetch(redirect.headers.get('location')!);
  expect(object.status).toBe(200);
  return Buffer.from(await object.arrayBuffer());
}

describe('an upload whose storage connection is reset', () => {
  it('is retried: POST /upload answers 201 and the object holds the whole file', async () => {
    proxy.resetNext('PUT ');

    const response = await upload('/api/v1/upload', [{ name: 'file', filename: 'scan.pdf', type: 'application/pdf', data: PDF }]);

    expect(proxy.resets).toBe(1);
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ filename: 'scan.pdf', size: PDF.length, type: 'application/pdf' });
    expect(await storedBytes(response.body.data.url)).toEqual(PDF);
  });

  it('is retried within a multiple upload: every file is stored once, none is lost', async () => {
    const resetsBefore = proxy.resets;
    proxy.resetNext('PUT ');

    const response = await upload('/api/v1/upload/multiple', [
      { name: 'files', filename: 'a.png', type: 'image/png', data: PNG },
      { name: 'files', filename: 'b.jpg', type: 'image/jpeg', data: JPEG },
    ]);

    expect(proxy.resets).toBe(resetsBefore + 1);
    expect(response.status).toBe(201);
    const files = response.body.data.files as { url: string; filename: string }[];
    expect(files.map((f) => f.filename)).toEqual(['a.png', 'b.jpg']);
    expect(await storedBytes(files[0].url)).toEqual(PNG);
    expect(await storedBytes(files[1].url)).toEqual(JPEG);
  });
});

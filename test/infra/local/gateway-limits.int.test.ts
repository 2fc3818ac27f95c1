/**
 * Limits answered, not cut off, by the local gateway under `npm start`: a body declared over the
 * limit gets its 413 before it is sent (`Expect: 100-continue`) or while it is still being sent
 * (no Expect), and the client reads the answer (curl exits 0); a client that sends its headers
 * too slowly is answered 408 and cut off after HEADERS_TIMEOUT_MS.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HEADERS_TIMEOUT_MS } from '../../../infra/local/gateway.js';

const baseUrl = inject('baseUrl');
const dir = mkdtempSync(join(tmpdir(), 'era-limits-'));
// Over API Gateway's 10 MB: the connection is closed after the answer.
const bigBody = join(dir, 'big.json');
beforeAll(() => writeFileSync(bigBody, Buffer.alloc(12 * 1024 * 1024, 0x20)));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface CurlRun {
  code: number;
  status: number;
  /** Bytes of the body curl sent. */
  uploaded: number;
  body: string;
  stderr: string;
}

function curl(args: string[]): Promise<CurlRun> {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}`);
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '-o', out, '-w', '%{http_code} %{size_upload}', ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      let body = '';
      try {
        body = readFileSync(out, 'utf8');
      } catch {
        // no body written
      }
      const [status, uploaded] = stdout.split(' ').map(Number);
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, status, uploaded, body, stderr });
    });
  });
}

describe('local gateway limits', () => {
  it('answers a body declared over the limit with 413 instead of 100 Continue, and curl reads it', async () => {
    const run = await curl(['-H', 'Expect: 100-continue', '-H', 'Content-Type: application/json', '--data-binary', `@${bigBody}`, `${baseUrl}/api/v1/tags`]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.status).toBe(413);
    expect(JSON.parse(run.body)).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
    // No `100 Continue` came: the body was never sent.
    expect(run.uploaded).toBe(0);
  });

  it('answers 413 to a client already sending an oversized body, which reads it rather than a broken pipe', async () => {
    // `Expect:` with no value: curl sends the body at once.
    const run = await curl(['-H', 'Expect:', '-H', 'Content-Type: application/json', '--data-binary', `@${bigBody}`, `${baseUrl}/api/v1/tags`]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.status).toBe(413);
    expect(JSON.parse(run.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('lets fetch read the 413 of a 100 MB body it is still sending, never a broken pipe', async () => {
    // Closing at once, with the body still arriving, made fetch fail with EPIPE about one time in two.
    const body = Buffer.alloc(100 * 1024 * 1024, 0x20);
    const outcomes: string[] = [];

    for (let i = 0; i < 5; i++) {
      try {
        const res = await fetch(`${baseUrl}/api/v1/tags`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
        outcomes.push(`${res.status} ${((await res.json()) as { code: string }).code}`);
      } catch (error) {
        outcomes.push(`${(error as Error).message}: ${((error as Error).cause as Error | undefined)?.message}`);
      }
    }

    expect(outcomes).toEqual(Array(5).fill('413 PAYLOAD_TOO_LARGE'));
  }, 60_000);

  it('sends 100 Continue for a body within the limit, which is then read', async () => {
    const small = join(dir, 'small.json');
    writeFileSync(small, JSON.stringify({ email: 'nobody@test.local', password: 'not-the-password' }));

    const run = await curl(['-H', 'Expect: 100-continue', '-H', 'Content-Type: application/json', '--data-binary', `@${small}`, `${baseUrl}/api/v1/auth/login`]);

    expect(run.code).toBe(0);
    expect(run.status).toBe(401);
  });

  it('cuts off a client that sends its headers too slowly, answering 408', async () => {
    const url = new URL(baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    const opened = Date.now();
    let received = '';
    socket.on('data', (d) => (received += d));
    socket.write('GET /api/health HTTP/1.1\r\nHost: local\r\n');
    // One header line a second, never the blank line that ends them.
    const drip = setInterval(() => socket.writable && socket.write(`X-Slow-${Date.now()}: 1\r\n`), 1000);
    const closedAfter = await new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
    clearInterval(drip);

    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfter).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(closedAfter).toBeLessThan(HEADERS_TIMEOUT_MS + 3_000);
  }, 30_000);
});

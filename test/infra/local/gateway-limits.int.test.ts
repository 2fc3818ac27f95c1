/**
 * Limits answered, not cut off, by the local gateway under `npm start`: a body declared over the
 * limit gets its 413 before it is sent (`Expect: 100-continue`) or while it is still being sent
 * (no Expect), and the client reads the answer (curl exits 0); every oversized body, whatever its
 * framing (Content-Length or chunked, under or over 10 MB, keep-alive or `Connection: close`),
 * gets its 413 and the client's writes never fail; a client that sends its headers too slowly is
 * answered 408 and cut off after HEADERS_TIMEOUT_MS.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HEADERS_TIMEOUT_MS } from '../../../infra/local/gateway.js';
import { MAX_TEXT_BODY_BYTES } from '../../../shared/body-limits.js';

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


interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The first complete response in `data` (framed by Content-Length or chunked), and what follows it. */
function parseResponse(data: Buffer): { response: RawResponse; rest: Buffer } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const status = Number(statusLine.split(' ')[1]);
  let at = end + 4;
  if (headers['transfer-encoding'] !== 'chunked') {
    const length = Number(headers['content-length'] ?? 0);
    if (data.length < at + length) return undefined;
    return { response: { status, headers, body: data.subarray(at, at + length).toString('utf8') }, rest: data.subarray(at + length) };
  }
  const chunks: Buffer[] = [];
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (data.length < lineEnd + 2 + size + 2) return undefined;
    chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
    if (size === 0) return { response: { status, headers, body: Buffer.concat(chunks).toString('utf8') }, rest: data.subarray(at) };
  }
}

interface Exchange {
  response?: RawResponse;
  /** The error a write of the request met (EPIPE, ECONNRESET), if any. */
  writeError?: string;
  /** The answer to a second request sent on the same connection once the first was answered, unless it closed. */
  next?: RawResponse;
  closedByServer: boolean;
}

/**
 * Sends POST /api/v1/tags with `size` bytes of JSON on a raw socket, as the framing says, writing
 * the whole body whatever comes back, then a GET /api/health on the same connection unless the
 * answer closes it.
 */
function sendOversized(options: { size: number; chunked: boolean; close: boolean }): Promise<Exchange> {
  const url = new URL(baseUrl);
  const head = [
    'POST /api/v1/tags HTTP/1.1',
    `Host: ${url.host}`,
    'Content-Type: application/json',
    options.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${options.size}`,
    ...(options.close ? ['Connection: close'] : []),
    '',
    '',
  ].join('\r\n');
  const parts: Buffer[] = [Buffer.from(head)];
  const piece = Buffer.alloc(1024 * 1024, 0x20);
  for (let sent = 0; sent < options.size; sent += piece.length) {
    const chunk = piece.subarray(0, Math.min(piece.length, options.size - sent));
    parts.push(...(options.chunked ? [Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')] : [chunk]));
  }
  if (options.chunked) parts.push(Buffer.from('0\r\n\r\n'));

  return new Promise((resolve) => {
    const exchange: Exchange = { closedByServer: false };
    const socket: Socket = connect(Number(url.port), url.hostname);
    let received: Buffer = Buffer.alloc(0);
    let written = false;
    const timer = setTimeout(() => socket.destroy(), 20_000);
    const askAgain = () => {
      if (written && exchange.response && exchange.response.headers.connection !== 'close' && !exchange.next && !socket.destroyed) {
        socket.write(`GET /api/health HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`);
      }
    };
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const first = exchange.response ? undefined : parseResponse(received);
      if (first) {
        exchange.response = first.response;
        received = first.rest;
        askAgain();
      }
      if (exchange.response && !exchange.next) exchange.next = parseResponse(received)?.response;
    });
    socket.on('end', () => (exchange.closedByServer = true));
    socket.on('error', (error: NodeJS.ErrnoException) => (exchange.writeError ??= error.code ?? error.message));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(exchange);
    });
    socket.write(Buffer.concat(parts), (error) => {
      if (error) exchange.writeError ??= (error as NodeJS.ErrnoException).code ?? error.message;
      written = true;
      askAgain();
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

  // Over the limit of a JSON body, under API Gateway's 10 MB; and over 10 MB.
  const UNDER_10_MB = 7_000_000;
  const OVER_10_MB = 11_000_000;
  it.each([
    { framing: 'Content-Length', chunked: false, size: UNDER_10_MB, close: false },
    { framing: 'Content-Length', chunked: false, size: UNDER_10_MB, close: true },
    { framing: 'Content-Length', chunked: false, size: OVER_10_MB, close: false },
    { framing: 'Content-Length', chunked: false, size: OVER_10_MB, close: true },
    { framing: 'chunked', chunked: true, size: UNDER_10_MB, close: false },
    { framing: 'chunked', chunked: true, size: UNDER_10_MB, close: true },
    { framing: 'chunked', chunked: true, size: OVER_10_MB, close: false },
    { framing: 'chunked', chunked: true, size: OVER_10_MB, close: true },
  ])('answers 413 to a $size-byte $framing body (Connection: close $close), and every write of it succeeds', async ({ chunked, size, close }) => {
    expect(size).toBeGreaterThan(MAX_TEXT_BODY_BYTES);

    const exchange = await sendOversized({ size, chunked, close });

    expect(exchange.writeError).toBeUndefined();
    expect(exchange.response?.status).toBe(413);
    expect(JSON.parse(exchange.response!.body)).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
    if (close || size > 10 * 1024 * 1024) {
      // The connection closes after the answer, once the client has sent what it had.
      expect(exchange.response!.headers.connection).toBe('close');
      expect(exchange.next).toBeUndefined();
    } else {
      // Under 10 MB the rest of the body is dropped and the connection serves the next request.
      expect(exchange.response!.headers.connection).not.toBe('close');
      expect(exchange.next?.status).toBe(200);
    }
    expect(exchange.closedByServer).toBe(true);
  });

  it('answers 413 to curl sending 11 MB chunked, after reading it, never 502', async () => {
    const body = join(dir, 'eleven.json');
    writeFileSync(body, Buffer.alloc(OVER_10_MB, 0x20));

    const run = await curl(['-H', 'Content-Type: application/json', '-H', 'Transfer-Encoding: chunked', '--data-binary', `@${body}`, `${baseUrl}/api/v1/tasks`]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.status).toBe(413);
    expect(JSON.parse(run.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

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

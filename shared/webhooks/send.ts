/**
 * One HTTP POST to a receiver: a 2xx within the timeout is success; anything else (timeout,
 * connection error, redirect, 4xx, 5xx) is a failure to retry. Redirects are not followed. The
 * socket connects only to an allowed address (ssrf.ts) unless ALLOW_INSECURE_WEBHOOKS lifts it.
 * At most 1 KB of the receiver's answer is kept.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { isForbiddenAddress, safeLookup } from './ssrf.js';

export const RESPONSE_BODY_LIMIT = 1024;

export interface AttemptResult {
  ok: boolean;
  responseCode?: number;
  responseTimeMs: number;
  error?: string;
  /** The first 1 KB of the receiver's answer. */
  responseBody?: string;
}

// Keep-alive agents, created once: a receiver gets many deliveries in a row.
const agents = {
  safe: { http: new http.Agent({ keepAlive: true, lookup: safeLookup as never }), https: new https.Agent({ keepAlive: true, lookup: safeLookup as never }) },
  insecure: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
};

interface PostOptions {
  timeoutMs: number;
  allowInsecure: boolean;
}

/**
 * A kept-alive connection the receiver closed just as it was reused fails with ECONNRESET before
 * anything was sent: that attempt is repeated once on a new connection (Node's documented pattern).
 */
export async function postWebhook(target: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<AttemptResult> {
  const first = await postOnce(target, headers, body, options);
  return first.staleSocket ? postOnce(target, headers, body, options) : first;
}

function postOnce(target: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<AttemptResult & { staleSocket?: boolean }> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.resolve({ ok: false, responseTimeMs: 0, error: 'invalid URL' });
  }
  const secure = url.protocol === 'https:';
  if (!secure && !(options.allowInsecure && url.protocol === 'http:')) {
    return Promise.resolve({ ok: false, responseTimeMs: 0, error: 'only https:// targets are allowed' });
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A literal IP never goes through `lookup`: check it here.
  if (!options.allowInsecure && isIP(host) && isForbiddenAddress(host)) {
    return Promise.resolve({ ok: false, responseTimeMs: 0, error: `refused to connect to ${host}: not a public address` });
  }
  const pool = options.allowInsecure ? agents.insecure : agents.safe;
  const transport = secure ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'responseTimeMs'> & { staleSocket?: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, responseTimeMs: elapsed() });
    };
    const request = transport.request(
      url,
      {
        method: 'POST',
        agent: secure ? pool.https : pool.http,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_BODY_LIMIT) {
            chunks.push(chunk.subarray(0, RESPONSE_BODY_LIMIT - kept));
            kept += Math.min(chunk.length, RESPONSE_BODY_LIMIT - kept);
          }
        });
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          finish({ ok, responseCode: status, responseBody: Buffer.concat(chunks).toString('utf8'), ...(ok ? {} : { error: `receiver answered ${status}` }) });
        });
        response.on('error', (error) => finish({ ok: false, responseCode: response.statusCode, error: error.message }));
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, error: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        ok: false,
        error: error.code ? `${error.code}: ${error.message}` : error.message,
        staleSocket: request.reusedSocket && error.code === 'ECONNRESET',
      }),
    );
    request.end(body);
  });
}

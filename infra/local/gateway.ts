/**
 * The local stand-in for API Gateway: turns each HTTP request into a REST (v1) proxy event,
 * invokes the family's handler, and writes its result back — with the limits a request meets on
 * AWS (a body over what a function can receive → 413, shared/body-limits.ts; 29 s
 * integration timeout → 504, except for streamed responses) and its error responses in the
 * product's envelope. A body declared over the limit is answered 413 before it is read (instead
 * of `100 Continue` when the client asks first); slow senders are cut off (HEADERS_TIMEOUT_MS).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Socket } from 'node:net';
import { config } from '../../shared/config.js';
import { ApiError, NotFoundError, PayloadTooLargeError, ServiceUnavailableError } from '../../shared/errors.js';
import { BODY_TOO_LARGE_MESSAGE, maxBodyBytes, MIN_COMPRESSION_BYTES } from '../../shared/body-limits.js';
import { API_FUNCTION_TIMEOUT_SECONDS } from '../../shared/http/deadline.js';
import { nameMap, proxyQueryFields, validRequestId } from '../../shared/http/request-context.js';
import { familyOfPath, matchPath, STREAMING_TIMEOUT_SECONDS } from '../../shared/routes.js';
import { isStreaming, lambdaContext, loadHandler, ResponseStream, type LambdaHandler, type StreamPrelude } from './lambda-runtime.js';

export type HandlerLoader = (family: string) => Promise<LambdaHandler>;

export const INTEGRATION_TIMEOUT_MS = 29_000;
const TEXT_TYPES = /^(application\/([\w.+-]+\+)?json|application\/x-www-form-urlencoded|text\/)/i;


/**
 * Past API Gateway's own ceiling (10 MB) a refused body is not waited for: the answer closes the
 * connection. Below it the connection stays open, and Node drops the rest of an unread body once
 * the answer is sent, so a client still writing its body gets the 413 instead of a broken pipe.
 */
const DRAIN_LIMIT = 10 * 1024 * 1024;

/**
 * How long a client has to send its request line and headers, and its whole request: one that
 * sends them slower (a slowloris) is answered 408 and cut off. Checked every second.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 60_000;

/**
 * A connection closed after a 413 is closed the way nginx does it ("lingering close"): our side
 * is shut once the answer is written, and what the client still sends is read and dropped until
 * it closes its side, for at most LINGER_MS. Closing at once, with its body still arriving,
 * would make the kernel reset the connection, and the client would see a broken pipe instead of
 * the answer. It applies whenever the connection closes after the 413: past DRAIN_LIMIT, and
 * below it when the client sent `Connection: close`.
 */
const LINGER_MS = 5_000;

/** While the engine restarts, requests are refused at once; clients retry after this many seconds. */
const RESTART_RETRY_AFTER_SECONDS = 5;

function lingerOnClose(socket: Socket): void {
  // Node's server calls destroySoon once a `Connection: close` answer is finished.
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.destroyed) return;
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => {
      clearTimeout(timer);
      this.destroy();
    });
    this.once('close', () => clearTimeout(timer));
    this.resume();
  };
}

class TooLarge extends Error {
  constructor(readonly closeConnection: boolean) {
    super('body too large');
  }
}

/** The client went away before its body ended: there is no one to answer. */
class ClientGone extends Error {}

/**
 * The whole body, or TooLarge. Past the limit the rest is only counted, and refused at its end;
 * past DRAIN_LIMIT it is refused at once. The request is never destroyed here (leaving a
 * `for await` over it would destroy it, and its socket with it, before the 413 is written): a
 * body refused before its end keeps flowing to no listener, dropped, while the answer is sent.
 */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer> {
  // The limit of the body's media type, whether declared (as the WAF rule sees it on AWS) or not.
  const limit = maxBodyBytes(req.headers['content-type']);
  const declared = Number(req.headers['content-length'] ?? 0);
  // Refused on its declared length before any of it is read, as WAF does.
  if (declared > limit) return Promise.reject(new TooLarge(declared > DRAIN_LIMIT));
  // Only now is the body asked for (a client that sent `Expect: 100-continue` sends it now).
  if (expectsContinue(req)) res.writeContinue();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      req.off('data', onData).off('end', onEnd).off('error', onError);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > DRAIN_LIMIT) settle(() => reject(new TooLarge(true)));
    };
    const onEnd = () => settle(() => (size > limit ? reject(new TooLarge(false)) : resolve(Buffer.concat(chunks))));
    const onError = (error: Error) => settle(() => reject(new ClientGone(error.message)));
    req.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

export function toProxyEvent(req: IncomingMessage, url: URL, body: Buffer, resource: string, params: Record<string, string>): APIGatewayProxyEvent {
  const headers = nameMap<string>();
  const multiValueHeaders = nameMap<string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    const value = req.rawHeaders[i + 1];
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const contentType = req.headers['content-type'] ?? '';
  const binary = body.length > 0 && !TEXT_TYPES.test(contentType);
  const requestId = randomUUID();
  return {
    resource,
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    ...proxyQueryFields(url.searchParams),
    pathParameters: Object.keys(params).length ? params : null,
    stageVariables: null,
    body: body.length ? body.toString(binary ? 'base64' : 'utf8') : null,
    isBase64Encoded: binary,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: req.method ?? 'GET',
      identity: { sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1', userAgent: req.headers['user-agent'] ?? null } as never,
      path: url.pathname,
      stage: 'local',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
    },
  };
}

function sendError(res: ServerResponse, error: ApiError, requestId: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(error.status, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-ID': requestId, ...error.headers });
  res.end(JSON.stringify(error.toJSON()));
}

/** Whether the client takes gzip (an Accept-Encoding naming gzip or *, without q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (!q || Number(q.slice(2)) > 0);
  });
}

function sendResult(res: ServerResponse, result: APIGatewayProxyResult, acceptEncoding?: string): void {
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
  let body = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  // As API Gateway's minimumCompressionSize does on AWS.
  const encoded = Object.keys(headers).some((name) => name.toLowerCase() === 'content-encoding');
  if (body.length >= MIN_COMPRESSION_BYTES && !encoded && acceptsGzip(acceptEncoding)) {
    body = gzipSync(body);
    headers['Content-Encoding'] = 'gzip';
    headers.Vary = [headers.Vary, 'Accept-Encoding'].filter(Boolean).join(', ');
  }
  if (result.statusCode !== 304) headers['Content-Length'] = String(body.length);
  res.writeHead(result.statusCode, headers);
  res.end(body);
}

class HttpResponseStream extends ResponseStream {
  private prelude: StreamPrelude = {};
  constructor(private readonly res: ServerResponse) {
    super();
    res.on('close', () => {
      if (!res.writableFinished) this.destroy();
    });
  }
  setPrelude(prelude: StreamPrelude): void {
    this.prelude = prelude;
  }
  private head(): void {
    if (this.res.headersSent) return;
    const headers: Record<string, string | string[]> = { ...(this.prelude.headers ?? {}) };
    for (const [name, values] of Object.entries(this.prelude.multiValueHeaders ?? {})) headers[name] = values;
    this.res.writeHead(this.prelude.statusCode ?? 200, headers);
    this.res.flushHeaders();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.head();
    this.res.write(chunk, callback);
  }
  override _final(callback: (error?: Error | null) => void): void {
    this.head();
    this.res.end(callback);
  }
}

function expectsContinue(req: IncomingMessage): boolean {
  return /^100-continue$/i.test(req.headers.expect ?? '');
}

/** What the runtime reports about its supervised parts (infra/local/supervisor.ts). */
export interface RuntimeStatus {
  /** Parts restarting now. */
  down(): string[];
  /** Whether requests cannot be served meanwhile (the engine is down). */
  essentialDown(): boolean;
}

/** GET /api/health while a part restarts: `degraded`, 503 when requests cannot be served meanwhile. */
function sendDegradedHealth(res: ServerResponse, runtime: RuntimeStatus, requestId: string): void {
  const unavailable = runtime.essentialDown();
  res.writeHead(unavailable ? 503 : 200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Request-ID': requestId,
    ...(unavailable ? { 'Retry-After': String(RESTART_RETRY_AFTER_SECONDS) } : {}),
  });
  res.end(JSON.stringify({ status: 'degraded', version: config().version, timestamp: new Date().toISOString(), restarting: runtime.down() }));
}

async function handle(req: IncomingMessage, res: ServerResponse, load: HandlerLoader, runtime?: RuntimeStatus): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://local');
  // The gateway's own errors echo X-Request-ID under the same rule as the stack's responses.
  const requestId = validRequestId(req.headers['x-request-id'] as string | undefined) ?? randomUUID();
  const match = matchPath(req.method ?? 'GET', url.pathname);
  if (runtime?.down().length) {
    const family = match ? (match.route?.family ?? familyOfPath(match.path)) : undefined;
    if (family === 'health' && req.method === 'GET') return sendDegradedHealth(res, runtime, requestId);
    if (runtime.essentialDown()) {
      const error = new ServiceUnavailableError('The database is restarting; retry shortly', RESTART_RETRY_AFTER_SECONDS);
      return sendError(res, error, requestId);
    }
  }
  let body: Buffer;
  try {
    body = await readBody(req, res);
  } catch (error) {
    if (error instanceof ClientGone) return;
    if (!(error instanceof TooLarge)) throw error;
    if (error.closeConnection) res.setHeader('Connection', 'close');
    // The rest of the body may still be arriving: if the connection closes after the answer
    // (past DRAIN_LIMIT, or asked by the client), it closes lingering.
    if (!req.complete && res.socket) lingerOnClose(res.socket);
    return sendError(res, new PayloadTooLargeError(BODY_TOO_LARGE_MESSAGE), requestId);
  }
  if (!match) return sendError(res, new NotFoundError(`No route for ${url.pathname}`), requestId);
  // A known path with an unknown method still reaches the family (API Gateway's ANY method),
  // whose stack answers 405.
  const family = match.route?.family ?? familyOfPath(match.path)!;
  const event = toProxyEvent(req, url, body, match.path, match.params);
  const handler = await load(family);

  if (isStreaming(handler)) {
    // A streamed response may outlive the 29 s integration timeout, up to the function's own.
    const context = lambdaContext(`local-${family}`, STREAMING_TIMEOUT_SECONDS * 1000);
    try {
      await handler(event, new HttpResponseStream(res), context);
    } catch (error) {
      // The client went away mid-stream: the handler's pipeline ends with it, nothing to answer.
      if (res.destroyed || res.writableEnded) return;
      throw error;
    }
    return;
  }
  // The function's own timeout, as on AWS: its stack answers 504 before it (shared/http/deadline.ts).
  const context = lambdaContext(`local-${family}`, API_FUNCTION_TIMEOUT_SECONDS * 1000);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ApiError(504, 'GATEWAY_TIMEOUT', 'The request took longer than 29 seconds')), INTEGRATION_TIMEOUT_MS + 100);
  });
  try {
    const result = (await Promise.race([handler(event, context), timeout])) as APIGatewayProxyResult;
    sendResult(res, result, req.headers['accept-encoding']);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `load` defaults to the families' own handler modules; tests may pass their own. `runtime`
 * reports the supervised parts (npm start): while the engine restarts, requests get 503.
 */
export function createGateway(load: HandlerLoader = loadHandler, runtime?: RuntimeStatus): Server {
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res, load, runtime).catch((error: unknown) => {
      const apiError = error instanceof ApiError ? error : new ApiError(502, 'BAD_GATEWAY', 'The function failed');
      if (!(error instanceof ApiError)) console.error('local gateway: handler failed', error);
      sendError(res, apiError, randomUUID());
    });
  };
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1_000 },
    onRequest,
  );
  // With a listener here Node leaves `100 Continue` to us: readBody sends it once the declared
  // length passes, so a body over the limit is answered 413 before the client sends it.
  server.on('checkContinue', onRequest);
  return server;
}

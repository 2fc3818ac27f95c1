/**
 * A recording proxy in front of DynamoDB Local: a server started with `dynamoEndpoint` = this
 * proxy's URL sends every request through it, so a test can count what the server asked of the
 * database (e.g. that an event stream stops querying once its client has gone), without any
 * counter in the product itself.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  /** The DynamoDB operation, e.g. "Query" (from X-Amz-Target). */
  operation: string;
  body: string;
  at: number;
}

export interface DynamoProxy {
  url: string;
  requests: RecordedRequest[];
  /** Requests of this operation whose body contains `text`. */
  count(operation: string, text: string): number;
  /** While set, requests it returns true for are answered with DynamoDB's 500 InternalServerError (fault injection). */
  refuse?: (operation: string, body: string) => boolean;
  /** While set, requests are held this many ms before they go on to the engine (a slow commit). */
  delay?: (operation: string, body: string) => number;
  stop(): Promise<void>;
}

export async function startDynamoProxy(target: string): Promise<DynamoProxy> {
  const to = new URL(target);
  const requests: RecordedRequest[] = [];
  const proxy = {} as DynamoProxy;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const operation = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
      requests.push({ operation, body: body.toString('utf8'), at: Date.now() });
      if (proxy.refuse?.(operation, body.toString('utf8'))) {
        res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'refused by the test proxy' }));
        return;
      }
      const forward = () => {
        const upstream = request(
          { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
          (reply) => {
            res.writeHead(reply.statusCode ?? 502, reply.headers);
            reply.pipe(res);
          },
        );
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      };
      const hold = proxy.delay?.(operation, body.toString('utf8')) ?? 0;
      if (hold > 0) setTimeout(forward, hold);
      else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (operation: string, text: string) => requests.filter((r) => r.operation === operation && r.body.includes(text)).length,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
  return proxy;
}

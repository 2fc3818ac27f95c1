/**
 * A TCP proxy for fault injection: every connection is passed through to `target`, except that,
 * while a reset is armed, the first connection whose next bytes match is reset (TCP RST) instead
 * of forwarded, as a storage server dropping a kept-alive connection does. A server started with
 * an endpoint pointing at this proxy sees the reset exactly where it would see the real one.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  url: string;
  /** Resets the next connection whose data starts with `prefix` (e.g. "PUT "), once. */
  resetNext(prefix: string): void;
  /** How many connections were reset. */
  resets: number;
  /** The request lines that went through (first line of each chunk that starts a request). */
  forwarded: string[];
  stop(): Promise<void>;
}

const REQUEST_LINE = /^(GET|PUT|POST|HEAD|DELETE) \S+ HTTP\/1\.1/;

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  let armed: string | undefined;
  const proxy = { resets: 0, forwarded: [] as string[] } as TcpProxy;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(to.port), to.hostname);
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    client.on('data', (chunk: Buffer) => {
      const text = chunk.subarray(0, 200).toString('latin1');
      if (armed !== undefined && text.startsWith(armed)) {
        armed = undefined;
        proxy.resets += 1;
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      const line = REQUEST_LINE.exec(text);
      if (line) proxy.forwarded.push(line[0]);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    resetNext: (prefix: string) => (armed = prefix),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  });
  return proxy;
}

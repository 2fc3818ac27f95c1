/**
 * Every socket `npm start` listens on, in its whole process tree (the API's Node process, the
 * DynamoDB Local JVM, the watchdog shell), read from /proc: with HOST=127.0.0.1 each is on
 * loopback; with HOST=0.0.0.0 only the API is on every interface, the engine and the S3 server
 * stay on loopback (both answer unauthenticated requests).
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../support/server.js';

interface Listener {
  pid: number;
  command: string;
  /** The address as `ss` shows it: 127.0.0.1:8000, [::1]:8000, [::ffff:127.0.0.1]:8000, 0.0.0.0:8000, [::]:8000. */
  address: string;
  port: number;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\])$/;

/** An address of /proc/net/tcp(6): 32-bit words in host (little-endian) byte order. */
function decodeAddress(hex: string, family: 4 | 6): string {
  const words = hex.match(/.{8}/g)!.map((word) => Buffer.from(word, 'hex').reverse());
  const bytes = Buffer.concat(words);
  if (family === 4) return [...bytes].join('.');
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes.readUInt16BE(10) === 0xffff) return `[::ffff:${[...bytes.subarray(12)].join('.')}]`;
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  return `[${groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::')}]`;
}

/** Listening TCP sockets by inode. */
function listeningSockets(): Map<string, { address: string; port: number }> {
  const sockets = new Map<string, { address: string; port: number }>();
  for (const [file, family] of [['/proc/net/tcp', 4], ['/proc/net/tcp6', 6]] as const) {
    for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (state !== '0A') continue; // TCP_LISTEN
      const [ip, port] = local.split(':');
      sockets.set(inode, { address: decodeAddress(ip, family), port: parseInt(port, 16) });
    }
  }
  return sockets;
}

function socketInodes(pid: number): string[] {
  const inodes: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:[')) inodes.push(target.slice(8, -1));
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

function processes(): { pid: number; ppid: number; command: string }[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        // pid (comm) state ppid …: comm may hold spaces and parentheses.
        const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return [{ pid: Number(entry), ppid, command }];
      } catch {
        return [];
      }
    });
}

/** Every listening socket of the process listening on `port` and of all its descendants. */
function listenersOfTree(port: number): Listener[] {
  const sockets = listeningSockets();
  const all = processes();
  const root = all.find((p) => {
    try {
      return socketInodes(p.pid).some((inode) => sockets.get(inode)?.port === port);
    } catch {
      return false;
    }
  });
  if (!root) throw new Error(`no process of ours listens on port ${port}`);
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...all.filter((p) => p.ppid === tree[i].pid));
  return tree.flatMap((p) =>
    socketInodes(p.pid).flatMap((inode) => {
      const socket = sockets.get(inode);
      return socket ? [{ pid: p.pid, command: p.command, ...socket }] : [];
    }),
  );
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** `npm start` with its own engine and S3 server, as a developer runs it. */
async function startWholeStack(host: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'era-listen-'));
  dirs.push(dataDir);
  return startServer({ dynamoEndpoint: '', env: { HOST: host, DATA_DIR: dataDir, DYNAMODB_ENDPOINT: '', AWS_ENDPOINT_URL_DYNAMODB: '', S3_ENDPOINT: '', AWS_ENDPOINT_URL_S3: '' } });
}

describe('npm start listens on loopback only', () => {
  it('has every listening socket of its process tree on loopback with HOST=127.0.0.1', async () => {
    const server = await startWholeStack('127.0.0.1');
    try {
      const apiPort = Number(new URL(server.url).port);

      const listeners = listenersOfTree(apiPort);

      // The API, the S3 server and the engine at least: none of them on a wildcard address.
      expect(listeners.map((l) => l.command)).toEqual(expect.arrayContaining(['node', 'java']));
      expect(listeners.length).toBeGreaterThanOrEqual(3);
      expect(listeners.filter((l) => !LOOPBACK.test(l.address))).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('puts only the API on every interface with HOST=0.0.0.0', async () => {
    const server = await startWholeStack('0.0.0.0');
    try {
      const apiPort = Number(new URL(server.url).port);

      const listeners = listenersOfTree(apiPort);

      const exposed = listeners.filter((l) => !LOOPBACK.test(l.address));
      expect(exposed).toEqual([expect.objectContaining({ command: 'node', address: '0.0.0.0', port: apiPort })]);
      expect(listeners.some((l) => l.command === 'java' && LOOPBACK.test(l.address))).toBe(true);
    } finally {
      await server.stop();
    }
  }, 180_000);
});

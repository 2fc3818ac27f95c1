/**
 * Where webhooks may be sent (CONTRACT.md): `https://` only, and never to an address inside the
 * deployment's reach — loopback, private, link-local (instance metadata), CGNAT, multicast,
 * reserved — in IPv4 or IPv6, IPv4-mapped and NAT64 forms included. Checked when a webhook is
 * registered and again at each delivery on the address actually connected to (`safeLookup`), so a
 * name that resolves elsewhere later (DNS rebinding) is refused too. ALLOW_INSECURE_WEBHOOKS=1
 * lifts both rules for local testing.
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, instance metadata 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (incl. fd00:ec2::254, the metadata service)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address embedded in an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:(?:0:)?|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const words = expandIpv6(lower);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (n: number) => words.slice(0, n).every((w) => w === 0);
  // ::ffff:a.b.c.d, ::ffff:0:a.b.c.d, ::a.b.c.d
  if (zeros(5) && words[5] === 0xffff) return v4(words[6], words[7]);
  if (zeros(4) && words[4] === 0xffff && words[5] === 0) return v4(words[6], words[7]);
  if (zeros(6)) return v4(words[6], words[7]);
  // 64:ff9b::/96 (NAT64)
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0)) return v4(words[6], words[7]);
  // 2002::/16 (6to4)
  if (words[0] === 0x2002) return v4(words[1], words[2]);
  return undefined;
}

function expandIpv6(address: string): number[] | undefined {
  let text = address.split('%')[0];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail[1].split('.').map(Number);
    text = text.slice(0, -tail[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = rest !== undefined && rest ? rest.split(':') : [];
  const fill = rest !== undefined ? 8 - left.length - right.length : 0;
  const parts = [...left, ...Array(Math.max(0, fill)).fill('0'), ...right];
  if (parts.length !== 8) return undefined;
  const words = parts.map((p) => parseInt(p, 16));
  return words.some((w) => Number.isNaN(w) || w < 0 || w > 0xffff) ? undefined : words;
}

/** True when a webhook must not connect to this IP address. Anything that is not an IP is refused. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare.split('%')[0]);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(bare);
  if (v4 !== undefined) return blocked.check(v4, 'ipv4');
  return blocked.check(bare.split('%')[0], 'ipv6');
}

export type Resolver = (host: string) => Promise<string[]>;

const lookupAll = promisify(dnsLookup);

export const systemResolver: Resolver = async (host) => {
  const addresses: LookupAddress[] = await lookupAll(host, { all: true, verbatim: true });
  return addresses.map((a) => a.address);
};

/**
 * Why a target URL is refused, or undefined when it may be registered. Every address the name
 * resolves to must be allowed (a mixed answer is how rebinding starts).
 */
export async function targetUrlProblem(raw: string, options: { allowInsecure: boolean; resolve?: Resolver }): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol !== 'https:' && !(options.allowInsecure && url.protocol === 'http:')) return 'must be an https:// URL';
  if (options.allowInsecure) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return isForbiddenAddress(host) ? `must not point to a private, loopback or link-local address (${host})` : undefined;
  let addresses: string[];
  try {
    addresses = await (options.resolve ?? systemResolver)(host);
  } catch {
    return `host '${host}' cannot be resolved`;
  }
  if (!addresses.length) return `host '${host}' cannot be resolved`;
  const bad = addresses.find(isForbiddenAddress);
  return bad ? `must not resolve to a private, loopback or link-local address (${host} → ${bad})` : undefined;
}

export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request: resolves the name and refuses the connection when any answer is
 * a forbidden address, so the check applies to the address the socket actually connects to.
 */
export function safeLookup(hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void {
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
    if (error) return callback(error, options.all ? [] : '');
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isForbiddenAddress(a.address));
    if (bad || !list.length) {
      return callback(new ForbiddenAddressError(`refused to connect to ${hostname} (${bad?.address ?? 'no address'}): not a public address`), options.all ? [] : '');
    }
    if (options.all) callback(null, list);
    else callback(null, list[0].address, list[0].family);
  });
}

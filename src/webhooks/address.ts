/**
 * Where a webhook may be sent: `https` on a public address. Private, loopback, link-local, unique-local,
 * CGNAT, multicast and unspecified addresses are refused after DNS resolution (every address the name
 * resolves to must be public; the request then goes to the address checked, so a second lookup cannot
 * swap it), unless WEBHOOK_ALLOW_PRIVATE=true, which also allows `http`. Redirects are never followed.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** Is this a private, loopback, link-local or otherwise non-public address (IPv4-mapped IPv6 included)? */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return blocked.check(address, 'ipv4');
}

export class DestinationError extends Error {}

/** A URL as an operator registers it: absolute, http(s), no credentials; `https` unless private is allowed. */
export function checkUrlShape(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationError(`not a URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw new DestinationError(`the webhook URL must use https${allowPrivate ? ' or http' : ''} (got ${url.protocol.replace(/:$/, '')}; http is allowed only with WEBHOOK_ALLOW_PRIVATE=true)`);
  }
  if (url.username || url.password) throw new DestinationError('the webhook URL must not carry credentials');
  if (url.hash) throw new DestinationError('the webhook URL must not have a #fragment');
  return url;
}

/**
 * Resolves the URL's host and checks every address: returns the address to connect to. Throws a
 * DestinationError naming the refused address (private ones unless `allowPrivate`).
 */
export async function resolveDestination(url: URL, allowPrivate: boolean, lookup: Lookup = systemLookup): Promise<{ address: string; family: number }> {
  checkUrlShape(url.href, allowPrivate);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host);
    } catch (e) {
      throw new DestinationError(`cannot resolve ${host}: ${(e as Error).message}`);
    }
  }
  if (addresses.length === 0) throw new DestinationError(`${host} resolves to no address`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad) throw new DestinationError(`${host} resolves to ${bad.address}, a private, loopback or link-local address (allowed only with WEBHOOK_ALLOW_PRIVATE=true)`);
  }
  return addresses[0]!;
}

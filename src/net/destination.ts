/**
 * Where an outgoing request may connect: the host is resolved once, every address checked (./address.ts) and the
 * connection pinned to them (`pinnedLookup`), so a second lookup cannot swap in a private address.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { ipv4Bytes, ipv6Bytes, nonPublicReason } from './address.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (the system resolver by default; tests give their own). */
export type Lookup = (host: string) => Promise<ResolvedAddress[]>;

export const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The host name could not be resolved (or to no address): not a refusal, the destination is unknown. */
export class ResolveError extends Error {
  constructor(
    readonly host: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ResolveError';
  }
}

/** The host is, or resolves to, an address that is not public. */
export class AddressRefused extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(host === address ? `${address} is ${reason}` : `${host} resolves to ${address}, ${reason}`);
    this.name = 'AddressRefused';
  }
}

/** A URL's host without the brackets of an IPv6 literal. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function literal(host: string): ResolvedAddress | null {
  if (ipv4Bytes(host)) return { address: host, family: 4 };
  if (ipv6Bytes(host)) return { address: host, family: 6 };
  return null;
}

/**
 * Every address of `host` (an IP literal is its own), all checked unless `allowPrivate`: one non-public address
 * refuses the host (AddressRefused), a public one is never picked around it; ResolveError when unresolvable.
 */
export async function resolveChecked(
  host: string,
  allowPrivate: boolean,
  lookup: Lookup = systemLookup,
  reasonOf: (address: string) => string | null = nonPublicReason,
): Promise<ResolvedAddress[]> {
  const own = literal(host);
  let addresses: ResolvedAddress[];
  if (own) addresses = [own];
  else {
    try {
      addresses = await lookup(host);
    } catch (e) {
      throw new ResolveError(host, `cannot resolve ${host}: ${(e as Error).message}`, { cause: e });
    }
  }
  if (addresses.length === 0) throw new ResolveError(host, `${host} resolves to no address`);
  if (!allowPrivate) {
    for (const a of addresses) {
      const reason = reasonOf(a.address);
      if (reason !== null) throw new AddressRefused(host, a.address, reason);
    }
  }
  return addresses;
}

/** A `lookup` answering with the checked addresses, never the resolver: all if asked (happy eyeballs), else one. */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_host, options, callback) => {
    const family = typeof options === 'object' ? options.family : undefined;
    const wanted = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    const list = wanted.length > 0 ? wanted : addresses;
    if (typeof options === 'object' && options.all)
      (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [...list]);
    else callback(null, list[0]!.address, list[0]!.family);
  };
}

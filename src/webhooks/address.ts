/**
 * Where a webhook may go: `https` to a public address (both lifted by WEBHOOK_ALLOW_PRIVATE=true). Every
 * resolved address must be public (src/net), and the request goes to the one checked, so a second lookup
 * cannot swap it. Redirects are never followed.
 */
import {
  AddressRefused,
  bareHost,
  resolveChecked,
  ResolveError,
  type Lookup,
  type ResolvedAddress,
} from '../net/index.js';

// The address rules are shared with the feed poller (src/net); the webhook code imports them from here.
export { isNonPublicAddress, systemLookup, type Lookup } from '../net/index.js';

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
    throw new DestinationError(
      `the webhook URL must use https${allowPrivate ? ' or http' : ''} (got ${url.protocol.replace(/:$/, '')}; http is allowed only with WEBHOOK_ALLOW_PRIVATE=true)`,
    );
  }
  if (url.username || url.password) throw new DestinationError('the webhook URL must not carry credentials');
  if (url.hash) throw new DestinationError('the webhook URL must not have a #fragment');
  return url;
}

/** Resolves the host, checks every address, returns the one to connect to; a DestinationError names a refused one. */
export async function resolveDestination(url: URL, allowPrivate: boolean, lookup?: Lookup): Promise<ResolvedAddress> {
  checkUrlShape(url.href, allowPrivate);
  try {
    return (await resolveChecked(bareHost(url), allowPrivate, lookup))[0]!;
  } catch (e) {
    if (e instanceof AddressRefused) {
      throw new DestinationError(
        `${e.host} resolves to ${e.address}, a private, loopback or link-local address: ${e.reason} (allowed only with WEBHOOK_ALLOW_PRIVATE=true)`,
      );
    }
    if (e instanceof ResolveError) throw new DestinationError(e.message);
    throw e;
  }
}

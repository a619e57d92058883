/** Stream admission rules (asyncapi.yaml "Who may connect"), pure: no I/O. */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import { plans, stream, type Tier } from '../contract/index.js';
import type { Admission } from '../auth/index.js';
import { effectiveTier } from '../domain/tiers.js';
import type { AccountRecord } from '../domain/tiers.js';
import type { KeyRecord } from '../store/ports/index.js';

import type { CloseSpec } from '../delivery/index.js';

export type { CloseSpec };

export type StreamAdmission =
  { ok: true; keyId: string; accountId: string; tier: Tier; withTickers: boolean } | { ok: false; close: CloseSpec };

/** The key: `api_key`, else `X-API-Key` (empty is absent); `api_key` twice is no key: never pick one of several. */
export function keyFromRequest(url: string | undefined, headers: IncomingHttpHeaders): string | undefined {
  const query = new URL(url ?? '/', 'http://stream.invalid').searchParams.getAll('api_key');
  if (query.length > 1) return undefined;
  if (query.length === 1 && query[0] !== '') return query[0];
  const header = headers['x-api-key'];
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined || value === '' ? undefined : value;
}

/** May a key of this tier hold a stream open? (`stream` flag of the plan table in openapi.yaml) */
function tierMayStream(tier: Tier): boolean {
  return plans[tier].stream;
}

/** The outcome of connecting, from the shared authentication result; the one-connection rule follows, in the slots. */
export function admissionOutcome(auth: Admission): StreamAdmission {
  if (!auth.ok) {
    return {
      ok: false,
      close: auth.problem === 'invalidApiKey' ? stream.closeCodes.invalidKey : stream.closeCodes.inactiveKey,
    };
  }
  const { keyId, accountId, tier } = auth.caller;
  if (!tierMayStream(tier)) return { ok: false, close: stream.closeCodes.planRequired };
  return { ok: true, keyId, accountId, tier, withTickers: plans[tier].tickers };
}

export type RecheckOutcome = { ok: true; tier: Tier; withTickers: boolean } | { ok: false; close: CloseSpec };

/** The periodic re-check, from stored records (not a key use for the IP guard); pro ↔ max switches the variant. */
export function recheckOutcome(
  key: KeyRecord | undefined,
  account: AccountRecord | undefined,
  now: number,
): RecheckOutcome {
  if (!key || !key.active || !account || key.accountId !== account.id)
    return { ok: false, close: stream.closeCodes.subscriptionExpired };
  const tier = effectiveTier(account, now);
  if (!tierMayStream(tier)) return { ok: false, close: stream.closeCodes.subscriptionExpired };
  return { ok: true, tier, withTickers: plans[tier].tickers };
}

/** The client address for the IP guard, computed as Express's `req.ip` for the same TRUST_PROXY (via `proxy-addr`). */
export function clientIpResolver(
  trustProxy: boolean | number | string,
): (headers: IncomingHttpHeaders, remoteAddress: string | undefined) => string {
  if (trustProxy === false) return (_headers, remoteAddress) => remoteAddress ?? 'unknown';
  const trust: (address: string, hop: number) => boolean =
    trustProxy === true
      ? () => true
      : typeof trustProxy === 'number'
        ? (_address, hop) => hop < trustProxy
        : proxyaddr.compile(trustProxy.split(',').map((entry) => entry.trim()));
  return (headers, remoteAddress) => {
    if (remoteAddress === undefined) return 'unknown';
    // proxy-addr reads only these two fields of the request.
    return proxyaddr({ headers, socket: { remoteAddress } } as unknown as IncomingMessage, trust);
  };
}

/** Admission for REST and the stream (docs/architecture.md): IP guard, the key (401 unless a known live key), tier. */
import type { ProblemKind, Tier } from '../contract/index.js';
import { effectiveTier, isBlocked } from '../domain/tiers.js';
import type { AccountStore } from '../store/ports/index.js';
import type { IpGuard } from '../state/ports.js';
import { hashKey } from '../store/ports/ids.js';
import { storeLookup, type KeyLookup } from './cache.js';

export { cachedLookup, type KeyLookup } from './cache.js';

export interface Caller {
  keyId: string;
  accountId: string;
  tier: Tier;
}

export type Admission =
  | { ok: true; caller: Caller }
  | { ok: false; problem: Extract<ProblemKind, 'invalidApiKey' | 'inactiveApiKey'>; retryAfterSeconds?: number };

export interface AuthDeps {
  accounts: AccountStore;
  ipGuard: IpGuard;
  /** Prefix of the keys this service accepts, e.g. `fns_live_`. */
  livePrefix: string;
  /** How the key and its account are read (default: from `accounts`, two reads; the REST app passes a cache). */
  keyLookup?: KeyLookup;
}

export async function authenticate(
  deps: AuthDeps,
  request: { ip: string; key: string | undefined; now: number; allowBlockedTier: boolean },
): Promise<Admission> {
  const key = request.key === '' ? undefined : request.key;
  const keyHash = key === undefined ? null : hashKey(key);
  const verdict = await deps.ipGuard.check(request.ip, keyHash, request.now);
  if (!verdict.allowed) {
    return {
      ok: false,
      problem: 'inactiveApiKey',
      retryAfterSeconds: Math.max(1, Math.ceil((verdict.blockedUntil - request.now) / 1000)),
    };
  }
  if (key === undefined || keyHash === null || !key.startsWith(deps.livePrefix))
    return { ok: false, problem: 'invalidApiKey' };
  const lookup = (deps.keyLookup ?? storeLookup(deps.accounts)).lookup(keyHash);
  // A fresh cache entry is answered synchronously: no extra turn of the event loop.
  const found = lookup instanceof Promise ? await lookup : lookup;
  if (!found) return { ok: false, problem: 'invalidApiKey' };
  const { key: record, account } = found;
  if (!record.active) return { ok: false, problem: 'inactiveApiKey' };
  if (!account) return { ok: false, problem: 'invalidApiKey' };
  const tier = effectiveTier(account, request.now);
  if (isBlocked(tier) && !request.allowBlockedTier) return { ok: false, problem: 'inactiveApiKey' };
  return { ok: true, caller: { keyId: record.keyId, accountId: record.accountId, tier } };
}

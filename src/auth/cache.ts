/**
 * Key + account lookup for admission, cached per key hash. An entry serves only under the store generation it was
 * read at (src/store/ports/changes.ts): a CLI change is seen within that module's bound, one on the service's own
 * connection at once. The tier is never cached but computed per request, so a grace window ends on time.
 */
import type { AccountRecord } from '../domain/tiers.js';
import type { AccountStore, KeyRecord } from '../store/ports/index.js';

export interface KeyAndAccount {
  key: KeyRecord;
  /** Undefined when the key's account is gone (answered as an invalid key). */
  account: AccountRecord | undefined;
}

/** What authenticate() reads for a key: from the cache when fresh (synchronously), else the store. */
export interface KeyLookup {
  lookup(keyHash: string): KeyAndAccount | undefined | Promise<KeyAndAccount | undefined>;
}

/** Distinct keys remembered at most; past that the oldest entries are dropped. */
const KEY_CACHE_MAX_ENTRIES = 10_000;

/** Two store reads per request: the lookup without a cache. */
export function storeLookup(accounts: Pick<AccountStore, 'findKey' | 'getAccount'>): KeyLookup {
  return {
    async lookup(keyHash) {
      const key = await accounts.findKey(keyHash);
      if (!key) return undefined;
      return { key, account: await accounts.getAccount(key.accountId) };
    },
  };
}

interface Entry {
  generation: number;
  value: KeyAndAccount;
}

/** Caches found keys only: guesses cannot fill the cache, and a key the CLI creates is found on first use. */
export function cachedLookup(
  accounts: Pick<AccountStore, 'findKey' | 'getAccount'>,
  generation: () => number,
  maxEntries: number = KEY_CACHE_MAX_ENTRIES,
): KeyLookup {
  const entries = new Map<string, Entry>();
  const uncached = storeLookup(accounts);
  return {
    lookup(keyHash) {
      const g = generation();
      const hit = entries.get(keyHash);
      if (hit && hit.generation === g) return hit.value;
      return Promise.resolve(uncached.lookup(keyHash)).then((value) => {
        if (value === undefined) {
          entries.delete(keyHash);
        } else {
          entries.delete(keyHash);
          if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
          entries.set(keyHash, { generation: g, value });
        }
        return value;
      });
    },
  };
}

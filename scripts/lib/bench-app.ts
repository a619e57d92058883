/**
 * The REST app as the benchmarks build it: `createApp` exactly as in production (auth and its caches,
 * IP guard, validation, the store), except that the rate limiter admits every request (a benchmark
 * sends thousands a minute; the rate-limit headers are still computed) and responses are not
 * re-validated (tests do that).
 */
import { limits } from '../../src/contract/index.js';
import type { AppDeps } from '../../src/http/app.js';
import { AdmitAllRateLimiter, MemoryIpGuard } from '../../src/state/memory.js';
import type { Store } from '../../src/store/ports/index.js';

export function benchAppDeps(store: Store, search: AppDeps['search'] = { search: async () => [] }): AppDeps {
  return {
    accounts: store.accounts,
    articles: store.articles,
    changes: store.changes,
    search,
    rateLimiter: new AdmitAllRateLimiter(),
    ipGuard: new MemoryIpGuard(limits.ipGuard),
    livePrefix: limits.keyPrefixes.live,
    clock: Date.now,
    trustProxy: false,
    validateResponses: false,
  };
}

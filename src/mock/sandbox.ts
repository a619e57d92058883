/** One fixed sandbox key per tier (`fns_test_max`…) behind AccountStore: admitted by the service's `authenticate`. */
import { limits, plans, tiers, type Tier } from '../contract/index.js';
import { nextPeriodEnd, toIso, type AccountRecord } from '../domain/tiers.js';
import type { IpGuard } from '../state/ports.js';
import type { IpVerdict } from '../domain/ip-guard.js';
import { hashKey } from '../store/ports/ids.js';
import type { AccountStore, KeyInfo, KeyRecord } from '../store/ports/index.js';

/** The sandbox key of every tier of the contract (`starter`, `pro`, `max`, `expired`, `free`). */
function sandboxKeys(testPrefix: string = limits.keyPrefixes.test): Record<Tier, string> {
  return Object.fromEntries(tiers.map((t) => [t, `${testPrefix}${t}`])) as Record<Tier, string>;
}

const FIXED = 'the sandbox accounts of the mock are fixed: one key per tier, nothing can be created or changed';

/**
 * Read-only, one per tier: paid tiers' period ends a month after the mock started; `expired` was cancelled a day
 * before `now` (inside the grace window); `free` never subscribed.
 */
export class SandboxAccounts implements AccountStore {
  readonly keys: Record<Tier, string>;
  private readonly byHash = new Map<string, Tier>();
  private readonly periodEnd: string;
  private readonly startedAt: string;

  constructor(
    private readonly clock: () => number,
    testPrefix: string = limits.keyPrefixes.test,
  ) {
    this.keys = sandboxKeys(testPrefix);
    for (const t of tiers) this.byHash.set(hashKey(this.keys[t]), t);
    this.periodEnd = nextPeriodEnd(clock());
    this.startedAt = toIso(clock());
  }

  async findKey(keyHash: string): Promise<KeyRecord | undefined> {
    const tier = this.byHash.get(keyHash);
    return tier && { keyId: `sandbox_${tier}`, accountId: `sandbox_${tier}`, active: true };
  }

  async getAccount(accountId: string): Promise<AccountRecord | undefined> {
    const tier = tiers.find((t) => `sandbox_${t}` === accountId);
    if (tier === undefined) return undefined;
    if (tier === 'expired') {
      const lastPaid = tiers.find((t) => plans[t].paid) ?? 'starter';
      return { id: accountId, tier: lastPaid, periodEnd: null, cancelledAt: toIso(this.clock() - 24 * 3600_000) };
    }
    return { id: accountId, tier, periodEnd: plans[tier].paid ? this.periodEnd : null, cancelledAt: null };
  }

  /** The sandbox keys, each on its own account, as if created when the mock started. */
  async listKeys(accountId?: string): Promise<KeyInfo[]> {
    return tiers
      .filter((t) => accountId === undefined || `sandbox_${t}` === accountId)
      .map((t) => ({ keyId: `sandbox_${t}`, accountId: `sandbox_${t}`, active: true, createdAt: this.startedAt }));
  }

  createAccount(): Promise<AccountRecord> {
    return Promise.reject(new Error(FIXED));
  }
  setTier(): Promise<AccountRecord | undefined> {
    return Promise.reject(new Error(FIXED));
  }
  cancel(): Promise<AccountRecord | undefined> {
    return Promise.reject(new Error(FIXED));
  }
  createKey(): Promise<void> {
    return Promise.reject(new Error(FIXED));
  }
  setKeyActive(): Promise<KeyRecord | undefined> {
    return Promise.reject(new Error(FIXED));
  }
}

/** The mock has no IP guard (documented in docs/mock.md): every address is allowed. */
export const openIpGuard: IpGuard = {
  async check(): Promise<IpVerdict> {
    return { allowed: true };
  },
};

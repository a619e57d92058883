/** In-process shared state (the embedded default); ./redis implements the same ports for several instances. */
import { admit, type RateDecision } from '../domain/rate-limit.js';
import {
  exemptionMatcher,
  isIdle,
  newIpState,
  presentKey,
  type IpGuardRules,
  type IpState,
  type IpVerdict,
} from '../domain/ip-guard.js';
import type { IpGuard, IpGuardOptions, RateLimiter } from './ports.js';

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, number[]>();
  private sweeps = 0;

  async hit(keyId: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    const { decision, log } = admit(this.logs.get(keyId) ?? [], now, limit, windowMs);
    this.logs.set(keyId, log);
    if (++this.sweeps % 10_000 === 0) this.sweep(now, windowMs);
    return decision;
  }

  private sweep(now: number, windowMs: number): void {
    for (const [k, log] of this.logs) if ((log[log.length - 1] ?? 0) <= now - windowMs) this.logs.delete(k);
  }
}

export class MemoryIpGuard implements IpGuard {
  private readonly ips = new Map<string, IpState>();
  private sweeps = 0;
  private readonly exempt: (ip: string) => boolean;

  constructor(
    private readonly rules: IpGuardRules,
    private readonly options: IpGuardOptions = {},
  ) {
    this.exempt = exemptionMatcher(options.exempt ?? []);
  }

  async check(ip: string, keyFingerprint: string | null, now: number): Promise<IpVerdict> {
    if (this.exempt(ip)) return { allowed: true };
    let state = this.ips.get(ip);
    if (!state) {
      state = newIpState();
      this.ips.set(ip, state);
    }
    const verdict = presentKey(state, keyFingerprint, now, this.rules);
    if (!verdict.allowed && verdict.blockedNow) this.options.onBlock?.(ip, verdict.blockedUntil);
    if (++this.sweeps % 10_000 === 0) {
      for (const [k, s] of this.ips) if (isIdle(s, now, this.rules)) this.ips.delete(k);
    }
    return verdict;
  }
}

/** Admits everything and reports what a fresh key would see: for the mock (no limit over time) and benchmarks. */
export class AdmitAllRateLimiter implements RateLimiter {
  async hit(_keyId: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    return { admitted: true, limit, remaining: Math.max(0, limit - 1), resetAt: now + windowMs, retryAfterSeconds: 0 };
  }
}

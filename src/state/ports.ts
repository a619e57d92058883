/** The shared-state ports: in-process (./memory.ts) and Redis (./redis), both passing test/state/ports.suite.ts. */
import type { RateDecision } from '../domain/rate-limit.js';
import type { IpVerdict } from '../domain/ip-guard.js';

export interface RateLimiter {
  /** Counts one request for `keyId` when there is room; never counts a refused one. */
  hit(keyId: string, limit: number, windowMs: number, now: number): Promise<RateDecision>;
}

export interface IpGuard {
  check(ip: string, keyFingerprint: string | null, now: number): Promise<IpVerdict>;
}

export interface IpGuardOptions {
  /** IP_GUARD_EXEMPT: addresses never blocked (nor tracked). */
  exempt?: readonly string[];
  /** Told once per block, when it starts (to log the address and its end, never a key). */
  onBlock?: (ip: string, blockedUntil: number) => void;
}

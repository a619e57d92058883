/**
 * Keeps REST serving while Redis is down: rate limiter and IP guard decide in-process and return to the
 * primary once it answers. Meanwhile N instances admit up to N × the plan (plus one plan's worth each per
 * switch) and N × (distinctKeys − 1) keys per IP. A failing primary is probed once per `probeIntervalMs`,
 * so a hung Redis costs one timeout per interval, not per request.
 */
import type { RateDecision } from '../domain/rate-limit.js';
import type { IpVerdict } from '../domain/ip-guard.js';
import type { MemoryIpGuard, MemoryRateLimiter } from './memory.js';
import type { IpGuard, RateLimiter } from './ports.js';

export type FallbackPort = 'rateLimiter' | 'ipGuard';

export interface FallbackHooks {
  /** The primary failed and the fallback took over: once per outage (a log line). */
  onFallback?: (port: FallbackPort, error: unknown) => void;
  /** A decision was made by the fallback: every time (a metric counter). */
  onFallbackDecision?: (port: FallbackPort) => void;
  /** The primary answered again after an outage: once per recovery (a log line). */
  onRecover?: (port: FallbackPort) => void;
  /** How long to skip the failing primary before trying it again (default 1000 ms). */
  probeIntervalMs?: number;
  /** The clock of the probe interval (ms); default `Date.now`. */
  now?: () => number;
}

const DEFAULT_PROBE_INTERVAL_MS = 1000;

/** The switch shared by both wrappers: primary first, fallback while it fails, probes to recover. */
class Switch {
  private down = false;
  private nextProbe = 0;
  private readonly probeIntervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly port: FallbackPort,
    private readonly hooks: FallbackHooks,
  ) {
    this.probeIntervalMs = hooks.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    this.now = hooks.now ?? Date.now;
  }

  async run<T>(primary: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    if (!this.down || this.now() >= this.nextProbe) {
      // While down, this request is the probe; the next ones wait for the interval.
      if (this.down) this.nextProbe = this.now() + this.probeIntervalMs;
      try {
        const result = await primary();
        if (this.down) {
          this.down = false;
          this.hooks.onRecover?.(this.port);
        }
        return result;
      } catch (e) {
        if (!this.down) {
          this.down = true;
          this.nextProbe = this.now() + this.probeIntervalMs;
          this.hooks.onFallback?.(this.port, e);
        }
      }
    }
    this.hooks.onFallbackDecision?.(this.port);
    return fallback();
  }

  /** True while the fallback decides (for /readyz or a gauge). */
  get degraded(): boolean {
    return this.down;
  }
}

export class FallbackRateLimiter implements RateLimiter {
  private readonly switch: Switch;

  constructor(
    private readonly primary: RateLimiter,
    private readonly fallback: MemoryRateLimiter,
    hooks: FallbackHooks = {},
  ) {
    this.switch = new Switch('rateLimiter', hooks);
  }

  hit(keyId: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    return this.switch.run(
      () => this.primary.hit(keyId, limit, windowMs, now),
      () => this.fallback.hit(keyId, limit, windowMs, now),
    );
  }

  get degraded(): boolean {
    return this.switch.degraded;
  }
}

export class FallbackIpGuard implements IpGuard {
  private readonly switch: Switch;

  constructor(
    private readonly primary: IpGuard,
    private readonly fallback: MemoryIpGuard,
    hooks: FallbackHooks = {},
  ) {
    this.switch = new Switch('ipGuard', hooks);
  }

  check(ip: string, keyFingerprint: string | null, now: number): Promise<IpVerdict> {
    return this.switch.run(
      () => this.primary.check(ip, keyFingerprint, now),
      () => this.fallback.check(ip, keyFingerprint, now),
    );
  }

  get degraded(): boolean {
    return this.switch.degraded;
  }
}

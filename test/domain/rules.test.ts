/** The pure business rules, with an injected clock: no server. */
import { describe, expect, it } from 'vitest';
import { limits, plans } from '../../src/contract/index.js';
import { admit } from '../../src/domain/rate-limit.js';
import { newIpState, presentKey } from '../../src/domain/ip-guard.js';
import { effectiveSince } from '../../src/domain/lookback.js';
import { effectiveTier, nextPeriodEnd, usageOf, type AccountRecord } from '../../src/domain/tiers.js';
import { presentArticle } from '../../src/domain/articles.js';

const T = Date.parse('2026-11-21T12:00:00Z');
const MIN = 60_000;
const H = 3600_000;
const DAY = 24 * H;

describe('sliding window: at most N admitted in any 60 s', () => {
  function run(times: number[], limit: number): boolean[] {
    let log: number[] = [];
    return times.map((t) => {
      const r = admit(log, t, limit, MIN);
      log = r.log;
      return r.decision.admitted;
    });
  }
  it('refuses the N+1th request inside the window', () => {
    expect(run([T, T + 1, T + 2], 2)).toEqual([true, true, false]);
  });
  it('admits again exactly when the oldest request is 60 s old, not a millisecond before', () => {
    expect(run([T, T + MIN - 1, T + MIN], 1)).toEqual([true, false, true]);
  });
  it('does not reset on a fixed minute boundary (no bursts of 2N across a boundary)', () => {
    const times = [T + 59_000, T + 59_500, T + 60_000, T + 60_500];
    expect(run(times, 2)).toEqual([true, true, false, false]);
  });
  it('does not log refused requests, so hammering does not extend the wait', () => {
    expect(run([T, T + 10_000, T + 20_000, T + 30_000, T + MIN], 1)).toEqual([true, false, false, false, true]);
  });
  it('reports remaining, reset and Retry-After', () => {
    const first = admit([], T, 2, MIN);
    expect(first.decision).toMatchObject({ admitted: true, remaining: 1, resetAt: T + MIN, retryAfterSeconds: 0 });
    const second = admit(first.log, T + 15_000, 2, MIN);
    expect(second.decision).toMatchObject({ admitted: true, remaining: 0, resetAt: T + MIN });
    const refused = admit(second.log, T + 20_000, 2, MIN);
    expect(refused.decision).toMatchObject({ admitted: false, remaining: 0, retryAfterSeconds: 40 });
  });
  it('refuses everything at limit 0', () => {
    expect(run([T], 0)).toEqual([false]);
  });
});

describe('lookback: 24 h for starter and expired, 7 days for pro and max, older since clamped', () => {
  it.each([
    ['starter', 24],
    ['expired', 24],
    ['pro', 168],
    ['max', 168],
  ] as const)('%s looks back %i hours', (tier, hours) => {
    expect(effectiveSince(tier, T, undefined)).toBe(T - hours * H);
    expect(effectiveSince(tier, T, T - 1000 * DAY)).toBe(T - hours * H);
    expect(plans[tier].lookbackHours).toBe(hours);
  });
  it('keeps a since inside the window as given', () => {
    expect(effectiveSince('starter', T, T - H)).toBe(T - H);
  });
});

describe('tier states: cancellation → expired for 7 days → free', () => {
  const acct = (over: Partial<AccountRecord> = {}): AccountRecord => ({ id: 'a', tier: 'max', periodEnd: '2026-12-21T12:00:00Z', cancelledAt: null, ...over });
  it('is the plan tier while not cancelled', () => {
    expect(effectiveTier(acct(), T)).toBe('max');
    expect(usageOf(acct(), T)).toEqual({ tier: 'max', rate_limit: 60, period_end: '2026-12-21T12:00:00Z' });
  });
  it('is expired from the moment of cancellation until 7 days later, at 1 req/min with no period end', () => {
    const a = acct({ cancelledAt: new Date(T).toISOString() });
    expect(effectiveTier(a, T)).toBe('expired');
    expect(effectiveTier(a, T + limits.graceWindowMs - 1)).toBe('expired');
    expect(usageOf(a, T)).toEqual({ tier: 'expired', rate_limit: 1, period_end: null });
  });
  it('is free once the grace window has ended', () => {
    const a = acct({ cancelledAt: new Date(T).toISOString() });
    expect(effectiveTier(a, T + 7 * DAY)).toBe('free');
    expect(usageOf(a, T + 7 * DAY)).toEqual({ tier: 'free', rate_limit: 0, period_end: null });
  });
  it('ends a billing period one calendar month later, clamped to the month end', () => {
    expect(nextPeriodEnd(Date.parse('2026-11-21T12:00:00Z'))).toBe('2026-12-21T12:00:00Z');
    expect(nextPeriodEnd(Date.parse('2026-01-31T08:30:00Z'))).toBe('2026-02-28T08:30:00Z');
  });
});

describe('IP guard: 3 distinct keys within 60 s block the IP for 10 minutes', () => {
  const rules = limits.ipGuard;
  it('uses the contract numbers', () => {
    expect(rules).toEqual({ distinctKeys: 3, windowMs: MIN, blockMs: 10 * MIN });
  });
  it('refuses the third distinct key and blocks until 10 minutes later', () => {
    const s = newIpState();
    expect(presentKey(s, 'a', T, rules)).toEqual({ allowed: true });
    expect(presentKey(s, 'b', T + 1000, rules)).toEqual({ allowed: true });
    expect(presentKey(s, 'c', T + 2000, rules)).toEqual({ allowed: false, blockedUntil: T + 2000 + 10 * MIN });
    expect(presentKey(s, 'a', T + 2000 + 10 * MIN - 1, rules).allowed).toBe(false);
    expect(presentKey(s, 'a', T + 2000 + 10 * MIN, rules)).toEqual({ allowed: true });
  });
  it('forgets a key 60 s after it was last presented', () => {
    const s = newIpState();
    presentKey(s, 'a', T, rules);
    presentKey(s, 'b', T + MIN, rules);
    expect(presentKey(s, 'c', T + MIN + 1, rules)).toEqual({ allowed: true });
  });
  it('does not count a request without a key, nor the same key twice', () => {
    const s = newIpState();
    for (let i = 0; i < 5; i++) {
      expect(presentKey(s, null, T + i, rules).allowed).toBe(true);
      expect(presentKey(s, 'a', T + i, rules).allowed).toBe(true);
      expect(presentKey(s, 'b', T + i, rules).allowed).toBe(true);
    }
  });
});

describe('tickers are shown to plans with per-ticker sentiment only', () => {
  const a = { id: '01M7Z87BJ3K8W3Q2ZP7R9T4V6X', content: 'x', urgency: 'regular' as const, sentiment: null, published_at: null, received_at: '2026-11-21T12:00:00.000Z', tickers: [] };
  it('keeps an empty tickers array for max and drops the key otherwise', () => {
    expect(presentArticle(a, plans.max.tickers)).toHaveProperty('tickers', []);
    expect('tickers' in presentArticle(a, plans.pro.tickers)).toBe(false);
    expect('tickers' in presentArticle(a, plans.starter.tickers)).toBe(false);
  });
});

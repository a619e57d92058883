/** The pure business rules, with an injected clock: no server. */
import { describe, expect, it } from 'vitest';
import { limits, plans } from '../../src/contract/index.js';
import { admit } from '../../src/domain/rate-limit.js';
import { newIpState, presentKey } from '../../src/domain/ip-guard.js';
import { effectiveSince } from '../../src/domain/lookback.js';
import { effectiveTier, nextPeriodEnd, usageOf, type AccountRecord } from '../../src/domain/tiers.js';
import { presentArticle } from '../../src/domain/articles.js';
import { loadYaml } from '../support/specs.js';

const T = Date.parse('2026-11-21T12:00:00Z');
const H = 3600_000;
const DAY = 24 * H;
// The plan and limit numbers come from the contract (x-plans, x-limits), never written out here.
const WINDOW = limits.rateWindowMs;
const GUARD = limits.ipGuard;
const lookback = (hours: number) => (hours % 24 === 0 && hours > 24 ? `${hours / 24} days` : `${hours} h`);

describe(`sliding window: at most N admitted in any ${WINDOW / 1000} s`, () => {
  function run(times: number[], limit: number): boolean[] {
    let log: number[] = [];
    return times.map((t) => {
      const r = admit(log, t, limit, WINDOW);
      log = r.log;
      return r.decision.admitted;
    });
  }
  it('refuses the N+1th request inside the window', () => {
    expect(run([T, T + 1, T + 2], 2)).toEqual([true, true, false]);
  });
  it(`admits again exactly when the oldest request is ${WINDOW / 1000} s old, not a millisecond before`, () => {
    expect(run([T, T + WINDOW - 1, T + WINDOW], 1)).toEqual([true, false, true]);
  });
  it('does not reset on a fixed window boundary (no bursts of 2N across a boundary)', () => {
    const boundary = T + WINDOW;
    const times = [boundary - 1000, boundary - 500, boundary, boundary + 500];
    expect(run(times, 2)).toEqual([true, true, false, false]);
  });
  it('does not log refused requests, so hammering does not extend the wait', () => {
    expect(run([T, T + 10_000, T + 20_000, T + 30_000, T + WINDOW], 1)).toEqual([true, false, false, false, true]);
  });
  it('reports remaining, reset and Retry-After', () => {
    const first = admit([], T, 2, WINDOW);
    expect(first.decision).toMatchObject({ admitted: true, remaining: 1, resetAt: T + WINDOW, retryAfterSeconds: 0 });
    const second = admit(first.log, T + 15_000, 2, WINDOW);
    expect(second.decision).toMatchObject({ admitted: true, remaining: 0, resetAt: T + WINDOW });
    const refused = admit(second.log, T + 20_000, 2, WINDOW);
    expect(refused.decision).toMatchObject({ admitted: false, remaining: 0, retryAfterSeconds: WINDOW / 1000 - 20 });
  });
  it('refuses everything at limit 0', () => {
    expect(run([T], 0)).toEqual([false]);
  });
});

describe(`lookback: ${lookback(plans.starter.lookbackHours)} for starter, ${lookback(plans.expired.lookbackHours)} for expired, ${lookback(plans.pro.lookbackHours)} for pro, ${lookback(plans.max.lookbackHours)} for max, older since clamped`, () => {
  it.each((['starter', 'expired', 'pro', 'max'] as const).map((tier) => [tier, plans[tier].lookbackHours] as const))(
    '%s looks back %i hours',
    (tier, hours) => {
      expect(effectiveSince(tier, T, undefined)).toBe(T - hours * H);
      expect(effectiveSince(tier, T, T - 1000 * DAY)).toBe(T - hours * H);
    },
  );
  it('keeps a since inside the window as given', () => {
    expect(effectiveSince('starter', T, T - H)).toBe(T - H);
  });
});

describe(`tier states: cancellation → expired for ${limits.graceWindowMs / DAY} days → free`, () => {
  const acct = (over: Partial<AccountRecord> = {}): AccountRecord => ({
    id: 'a',
    tier: 'max',
    periodEnd: '2026-12-21T12:00:00Z',
    cancelledAt: null,
    ...over,
  });
  it('is the plan tier while not cancelled', () => {
    expect(effectiveTier(acct(), T)).toBe('max');
    expect(usageOf(acct(), T)).toEqual({
      tier: 'max',
      rate_limit: plans.max.rateLimit,
      period_end: '2026-12-21T12:00:00Z',
    });
  });
  it(`is expired from the moment of cancellation until ${limits.graceWindowMs / DAY} days later, at ${plans.expired.rateLimit} req/min with no period end`, () => {
    const a = acct({ cancelledAt: new Date(T).toISOString() });
    expect(effectiveTier(a, T)).toBe('expired');
    expect(effectiveTier(a, T + limits.graceWindowMs - 1)).toBe('expired');
    expect(usageOf(a, T)).toEqual({ tier: 'expired', rate_limit: plans.expired.rateLimit, period_end: null });
  });
  it('is free once the grace window has ended', () => {
    const a = acct({ cancelledAt: new Date(T).toISOString() });
    expect(effectiveTier(a, T + limits.graceWindowMs)).toBe('free');
    expect(usageOf(a, T + limits.graceWindowMs)).toEqual({
      tier: 'free',
      rate_limit: plans.free.rateLimit,
      period_end: null,
    });
  });
  it('ends a billing period one calendar month later, clamped to the month end', () => {
    expect(nextPeriodEnd(Date.parse('2026-11-21T12:00:00Z'))).toBe('2026-12-21T12:00:00Z');
    expect(nextPeriodEnd(Date.parse('2026-01-31T08:30:00Z'))).toBe('2026-02-28T08:30:00Z');
  });
});

describe(`IP guard: ${GUARD.distinctKeys} distinct keys within ${GUARD.windowMs / 1000} s block the IP for ${GUARD.blockMs / 60_000} minutes`, () => {
  const rules = limits.ipGuard;
  /** Key names a, b, c, …: `n` distinct ones. */
  const distinct = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + i));
  it('reads the numbers of x-limits, seconds turned into milliseconds', () => {
    const xl = loadYaml('openapi.yaml')['x-limits'];
    expect(rules).toEqual({
      distinctKeys: xl.ipGuard.distinctKeys,
      windowMs: xl.ipGuard.windowSeconds * 1000,
      blockMs: xl.ipGuard.blockSeconds * 1000,
    });
    expect(limits.rateWindowMs).toBe(xl.rateWindowSeconds * 1000);
    expect(limits.graceWindowMs).toBe(xl.graceWindowDays * DAY);
  });
  it(`refuses distinct key number ${GUARD.distinctKeys} and blocks until ${GUARD.blockMs / 60_000} minutes later`, () => {
    const s = newIpState();
    const keys = distinct(rules.distinctKeys);
    const last = T + (keys.length - 1) * 1000;
    keys.slice(0, -1).forEach((k, i) => expect(presentKey(s, k, T + i * 1000, rules)).toEqual({ allowed: true }));
    expect(presentKey(s, keys[keys.length - 1]!, last, rules)).toEqual({
      allowed: false,
      blockedUntil: last + rules.blockMs,
      blockedNow: true,
    });
    expect(presentKey(s, 'a', last + rules.blockMs - 1, rules).allowed).toBe(false);
    expect(presentKey(s, 'a', last + rules.blockMs, rules)).toEqual({ allowed: true });
  });
  it(`forgets a key ${GUARD.windowMs / 1000} s after it was last presented`, () => {
    const s = newIpState();
    const [first, ...others] = distinct(rules.distinctKeys);
    presentKey(s, first!, T, rules);
    for (const k of others.slice(0, -1)) presentKey(s, k, T + rules.windowMs, rules);
    expect(presentKey(s, others[others.length - 1]!, T + rules.windowMs + 1, rules)).toEqual({ allowed: true });
  });
  it('does not count a request without a key, nor the same key twice', () => {
    const s = newIpState();
    const keys = distinct(rules.distinctKeys - 1);
    for (let i = 0; i < 5; i++) {
      expect(presentKey(s, null, T + i, rules).allowed).toBe(true);
      for (const k of keys) expect(presentKey(s, k, T + i, rules).allowed).toBe(true);
    }
  });
});

describe('tickers are shown to plans with per-ticker sentiment only', () => {
  const a = {
    id: '01M7Z87BJ3K8W3Q2ZP7R9T4V6X',
    content: 'x',
    urgency: 'regular' as const,
    sentiment: null,
    published_at: null,
    received_at: '2026-11-21T12:00:00.000Z',
    source: null,
    url: null,
    tickers: [],
  };
  it('keeps an empty tickers array for max and drops the key otherwise', () => {
    expect(presentArticle(a, plans.max.tickers)).toHaveProperty('tickers', []);
    expect('tickers' in presentArticle(a, plans.pro.tickers)).toBe(false);
    expect('tickers' in presentArticle(a, plans.starter.tickers)).toBe(false);
  });
});

/**
 * The behavioural suite of the shared-state ports (rate limiter, IP guard, stream slots), run on every
 * adapter: memory-ports.test.ts (in-process) and redis-ports.test.ts (Redis). The numbers come from the
 * contract (plans, limits, stream), never written out; times are a fake clock passed as `now`.
 */
import { describe, expect, it } from 'vitest';
import { limits, plans, stream } from '../../src/contract/index.js';
import { admit, type RateDecision } from '../../src/domain/rate-limit.js';
import type { IpGuard, IpGuardOptions, RateLimiter } from '../../src/state/ports.js';
import type { StreamSlots } from '../../src/state/stream-slots.js';

export interface PortEnv {
  /** Two rate limiters as two instances hold them (memory: the same one twice). */
  rateLimiters(): [RateLimiter, RateLimiter];
  /** Two IP guards with these options as two instances hold them (memory: the same one twice). */
  ipGuards(options?: IpGuardOptions): [IpGuard, IpGuard];
  /** Two stream-slot adapters as two instances hold them (memory: the same one twice). */
  slotPair(): [StreamSlots, StreamSlots];
}

let unique = 0;
/** A subject (key id, IP, account) no other test of this run uses. */
export const fresh = (what: string) => `${what}-${process.pid}-${Date.now()}-${++unique}`;

const T = Date.parse('2026-11-21T12:00:00Z');
const WINDOW = limits.rateWindowMs;
const GUARD = limits.ipGuard;
const PRO = plans.pro.rateLimit;
const STARTER = plans.starter.rateLimit;

/** The reference: admit() over the same times. */
function reference(times: readonly number[], limit: number): RateDecision[] {
  let log: number[] = [];
  return times.map((t) => {
    const r = admit(log, t, limit, WINDOW);
    log = r.log;
    return r.decision;
  });
}

async function sequence(
  limiter: RateLimiter,
  keyId: string,
  times: readonly number[],
  limit: number,
): Promise<RateDecision[]> {
  const out: RateDecision[] = [];
  for (const t of times) out.push(await limiter.hit(keyId, limit, WINDOW, t));
  return out;
}

/** The most admissions found in any window of WINDOW ms (windows starting at each admission). */
function maxInAnyWindow(admittedAt: readonly number[]): number {
  const s = [...admittedAt].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[i]! - s[j]! >= WINDOW) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** A deterministic pseudo-random generator (mulberry32), so a failure replays. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Registers the suite under `name`; skipped (every test) when `skip` is true. Returns a counter of the
 * tests it registered (read it from a later describe body, once they are collected), for the skip line.
 */
export function portSuite(name: string, env: () => PortEnv, options: { skip?: boolean } = {}): () => number {
  let count = 0;
  const test = (title: string, fn: () => Promise<void>) => {
    count++;
    it(title, fn);
  };
  describe.skipIf(options.skip ?? false)(name, () => {
    describe(`rate limiter: the exact sliding window (at most the plan in any ${WINDOW / 1000} s)`, () => {
      test(`refuses request number ${PRO + 1} inside the window, with the fields admit() gives`, async () => {
        const [rl] = env().rateLimiters();
        const times = Array.from({ length: PRO + 2 }, (_, i) => T + i * 100);
        expect(await sequence(rl, fresh('key'), times, PRO)).toEqual(reference(times, PRO));
        const decisions = await sequence(rl, fresh('key'), times, PRO);
        expect(decisions.filter((d) => d.admitted)).toHaveLength(PRO);
        expect(decisions[PRO]).toMatchObject({ admitted: false, remaining: 0, resetAt: T + WINDOW });
      });
      test(`admits again exactly when the oldest is ${WINDOW / 1000} s old, not a millisecond before`, async () => {
        const [rl] = env().rateLimiters();
        const times = [T, T + WINDOW - 1, T + WINDOW];
        const got = await sequence(rl, fresh('key'), times, STARTER);
        expect(got.map((d) => d.admitted)).toEqual([true, false, true]);
        expect(got).toEqual(reference(times, STARTER));
      });
      test('does not reset on a fixed window boundary (no burst of twice the plan across it)', async () => {
        const [rl] = env().rateLimiters();
        const boundary = T + WINDOW;
        const times = [
          ...Array.from({ length: PRO }, (_, i) => boundary - 1000 + i),
          ...Array.from({ length: PRO }, (_, i) => boundary + i),
        ];
        const got = await sequence(rl, fresh('key'), times, PRO);
        expect(got.filter((d) => d.admitted)).toHaveLength(PRO);
        expect(got).toEqual(reference(times, PRO));
      });
      test('does not count refused requests, so hammering does not extend the wait', async () => {
        const [rl] = env().rateLimiters();
        const times = [T, T + 10_000, T + 20_000, T + 30_000, T + WINDOW];
        const got = await sequence(rl, fresh('key'), times, STARTER);
        expect(got.map((d) => d.admitted)).toEqual([true, false, false, false, true]);
        expect(got.map((d) => d.retryAfterSeconds)).toEqual(reference(times, STARTER).map((d) => d.retryAfterSeconds));
        expect(got[1]!.retryAfterSeconds).toBe(WINDOW / 1000 - 10);
      });
      test('reports remaining, reset and Retry-After as admit() does', async () => {
        const [rl] = env().rateLimiters();
        const key = fresh('key');
        expect(await rl.hit(key, 2, WINDOW, T)).toEqual({
          admitted: true,
          limit: 2,
          remaining: 1,
          resetAt: T + WINDOW,
          retryAfterSeconds: 0,
        });
        expect(await rl.hit(key, 2, WINDOW, T + 15_000)).toEqual({
          admitted: true,
          limit: 2,
          remaining: 0,
          resetAt: T + WINDOW,
          retryAfterSeconds: 0,
        });
        expect(await rl.hit(key, 2, WINDOW, T + 20_000)).toEqual({
          admitted: false,
          limit: 2,
          remaining: 0,
          resetAt: T + WINDOW,
          retryAfterSeconds: WINDOW / 1000 - 20,
        });
      });
      test('after a downgrade (more logged than the new plan), reset is when one more is admitted, as Retry-After says', async () => {
        const [rl] = env().rateLimiters();
        const key = fresh('key');
        for (let i = 0; i < 5; i++) await rl.hit(key, 5, WINDOW, T + i * 1000);
        const refused = await rl.hit(key, 2, WINDOW, T + 10_000);
        // Four of the five must leave before a slot frees: the fourth leaves at T + 3 s + the window.
        expect(refused).toEqual({
          admitted: false,
          limit: 2,
          remaining: 0,
          resetAt: T + 3000 + WINDOW,
          retryAfterSeconds: (3000 + WINDOW - 10_000) / 1000,
        });
        expect(refused).toEqual(admit([T, T + 1000, T + 2000, T + 3000, T + 4000], T + 10_000, 2, WINDOW).decision);
      });
      test(`refuses everything at the free plan's limit (${plans.free.rateLimit})`, async () => {
        const [rl] = env().rateLimiters();
        const times = [T, T + 1];
        const got = await sequence(rl, fresh('key'), times, plans.free.rateLimit);
        expect(got).toEqual(reference(times, plans.free.rateLimit));
        expect(got.every((d) => !d.admitted)).toBe(true);
      });
      test('matches admit() decision by decision over a random minute-spanning sequence, never more than the plan in any window', async () => {
        const [a, b] = env().rateLimiters();
        const next = rng(9);
        const times: number[] = [];
        let t = T;
        for (let i = 0; i < 300; i++) times.push((t += Math.floor(next() * 1500)));
        const key = fresh('key');
        // Alternate between the two instances: they share one log.
        const got: RateDecision[] = [];
        for (const [i, time] of times.entries()) got.push(await (i % 2 ? b : a).hit(key, PRO, WINDOW, time));
        expect(got).toEqual(reference(times, PRO));
        const admittedAt = times.filter((_, i) => got[i]!.admitted);
        expect(admittedAt.length).toBeGreaterThan(PRO);
        expect(maxInAnyWindow(admittedAt)).toBe(PRO);
      });
      test(`admits exactly the plan out of 200 simultaneous requests spread over two instances (${STARTER} and ${PRO})`, async () => {
        const [a, b] = env().rateLimiters();
        for (const limit of [STARTER, PRO]) {
          const key = fresh('key');
          const got = await Promise.all(
            Array.from({ length: 200 }, (_, i) => (i % 2 ? b : a).hit(key, limit, WINDOW, T + (i % 7))),
          );
          expect(got.filter((d) => d.admitted)).toHaveLength(limit);
        }
      });
      test('keeps keys apart', async () => {
        const [rl] = env().rateLimiters();
        const [k1, k2] = [fresh('key'), fresh('key')];
        expect((await rl.hit(k1, STARTER, WINDOW, T)).admitted).toBe(true);
        expect((await rl.hit(k2, STARTER, WINDOW, T)).admitted).toBe(true);
        expect((await rl.hit(k1, STARTER, WINDOW, T + 1)).admitted).toBe(false);
      });
    });

    describe(`IP guard: ${GUARD.distinctKeys} distinct keys within ${GUARD.windowMs / 1000} s block the IP for ${GUARD.blockMs / 60_000} minutes`, () => {
      const keys = (n: number) => Array.from({ length: n }, () => fresh('fp'));
      test(`refuses distinct key number ${GUARD.distinctKeys}, blocks until ${GUARD.blockMs / 60_000} minutes later, tells onBlock once`, async () => {
        const blocks: [string, number][] = [];
        const [a, b] = env().ipGuards({ onBlock: (ip, until) => blocks.push([ip, until]) });
        const ip = fresh('ip');
        const ks = keys(GUARD.distinctKeys);
        const last = T + (ks.length - 1) * 1000;
        // Spread over the two instances: the count is shared.
        for (const [i, k] of ks.slice(0, -1).entries())
          expect(await (i % 2 ? b : a).check(ip, k, T + i * 1000)).toEqual({ allowed: true });
        expect(await b.check(ip, ks[ks.length - 1]!, last)).toEqual({
          allowed: false,
          blockedUntil: last + GUARD.blockMs,
          blockedNow: true,
        });
        expect(await a.check(ip, ks[0]!, last + 1)).toEqual({ allowed: false, blockedUntil: last + GUARD.blockMs });
        expect(await b.check(ip, null, last + GUARD.blockMs - 1)).toEqual({
          allowed: false,
          blockedUntil: last + GUARD.blockMs,
        });
        expect(await a.check(ip, ks[0]!, last + GUARD.blockMs)).toEqual({ allowed: true });
        expect(blocks).toEqual([[ip, last + GUARD.blockMs]]);
      });
      test(`forgets a key ${GUARD.windowMs / 1000} s after it was last presented`, async () => {
        const [g] = env().ipGuards();
        const ip = fresh('ip');
        const [first, ...others] = keys(GUARD.distinctKeys);
        await g.check(ip, first!, T);
        for (const k of others.slice(0, -1)) expect((await g.check(ip, k, T + GUARD.windowMs)).allowed).toBe(true);
        expect(await g.check(ip, others[others.length - 1]!, T + GUARD.windowMs + 1)).toEqual({ allowed: true });
        // …but one still inside the window counts: the next distinct key blocks.
        expect((await g.check(ip, fresh('fp'), T + GUARD.windowMs + 2)).allowed).toBe(false);
      });
      test('does not count a request without a key, nor the same key twice', async () => {
        const [g] = env().ipGuards();
        const ip = fresh('ip');
        const ks = keys(GUARD.distinctKeys - 1);
        for (let i = 0; i < 5; i++) {
          expect((await g.check(ip, null, T + i)).allowed).toBe(true);
          for (const k of ks) expect((await g.check(ip, k, T + i)).allowed).toBe(true);
        }
        expect((await g.check(ip, fresh('fp'), T + 10)).allowed).toBe(false);
      });
      test('keeps IPs apart', async () => {
        const [g] = env().ipGuards();
        const [ip1, ip2] = [fresh('ip'), fresh('ip')];
        for (const k of keys(GUARD.distinctKeys)) await g.check(ip1, k, T);
        expect((await g.check(ip1, null, T + 1)).allowed).toBe(false);
        expect(await g.check(ip2, fresh('fp'), T + 1)).toEqual({ allowed: true });
      });
      test('never blocks (nor reports) an exempt address, IPv4-mapped spelling included', async () => {
        const blocks: string[] = [];
        const [g] = env().ipGuards({ exempt: ['loopback', '10.1.0.0/16'], onBlock: (ip) => blocks.push(ip) });
        for (const ip of ['127.0.0.1', '::ffff:127.0.0.1', '10.1.2.3']) {
          for (const [i, k] of keys(GUARD.distinctKeys * 2).entries())
            expect(await g.check(ip, k, T + i)).toEqual({ allowed: true });
        }
        expect(blocks).toEqual([]);
        // An address outside the list is still guarded.
        const other = `10.2.${unique % 250}.${(unique++ % 250) + 1}-${fresh('x')}`;
        const verdicts = [];
        for (const k of keys(GUARD.distinctKeys)) verdicts.push(await g.check(other, k, T));
        expect(verdicts[verdicts.length - 1]!.allowed).toBe(false);
        expect(blocks).toEqual([other]);
      });
      test(`calls onBlock once when ${GUARD.distinctKeys * 4} requests race on two instances`, async () => {
        const blocks: number[] = [];
        const [a, b] = env().ipGuards({ onBlock: (_ip, until) => blocks.push(until) });
        const ip = fresh('ip');
        const verdicts = await Promise.all(keys(GUARD.distinctKeys * 4).map((k, i) => (i % 2 ? b : a).check(ip, k, T)));
        expect(verdicts.filter((v) => v.allowed)).toHaveLength(GUARD.distinctKeys - 1);
        expect(verdicts.filter((v) => !v.allowed && v.blockedNow)).toHaveLength(1);
        expect(blocks).toEqual([T + GUARD.blockMs]);
      });
    });

    describe(`stream slots: ${stream.connectionsPerAccount} connection per account across instances`, () => {
      test('takes the slot, refuses another connection of the account, keeps accounts apart', async () => {
        const [a, b] = env().slotPair();
        const [acct, other] = [fresh('acct'), fresh('acct')];
        expect(await a.tryAcquire(acct, 'c1')).toBe(true);
        expect(await a.tryAcquire(acct, 'c1')).toBe(true); // the holder asking again
        expect(await b.tryAcquire(acct, 'c2')).toBe(false);
        expect(await b.tryAcquire(other, 'c3')).toBe(true);
        await a.release(acct, 'c1');
        await b.release(other, 'c3');
      });
      test('frees the slot on release, and a release by a non-holder frees nothing', async () => {
        const [a, b] = env().slotPair();
        const acct = fresh('acct');
        expect(await a.tryAcquire(acct, 'c1')).toBe(true);
        await b.release(acct, 'c2');
        expect(await b.tryAcquire(acct, 'c4')).toBe(false);
        await a.release(acct, 'c1');
        expect(await b.tryAcquire(acct, 'c4')).toBe(true);
        await b.release(acct, 'c4');
        await b.release(acct, 'c4'); // twice: a no-op
        expect(await a.tryAcquire(acct, 'c3')).toBe(true);
        await a.release(acct, 'c3');
      });
    });

    describe('stream slots: a token per attempt; a released token is fenced and never holds a slot again', () => {
      test('a take that lands after the release of its token (the attempt gave up) holds nothing, and the account can connect', async () => {
        const [a, b] = env().slotPair();
        const acct = fresh('acct');
        // As when the caller timed out and released, and the stalled take request runs afterwards:
        await a.release(acct, 'gave-up');
        expect(await a.tryAcquire(acct, 'gave-up')).toBe(false);
        expect(await b.tryAcquire(acct, 'gave-up')).toBe(false);
        expect(await b.tryAcquire(acct, 'next')).toBe(true);
        await b.release(acct, 'next');
      });
      test('a connection that ended cannot take its slot back with its old token (a late renewal), on any instance', async () => {
        const [a, b] = env().slotPair();
        const acct = fresh('acct');
        expect(await a.tryAcquire(acct, 'ended')).toBe(true);
        await a.release(acct, 'ended');
        expect(await a.tryAcquire(acct, 'ended')).toBe(false);
        expect(await b.tryAcquire(acct, 'ended')).toBe(false);
        expect(await b.tryAcquire(acct, 'fresh-token')).toBe(true);
        await b.release(acct, 'fresh-token');
      });
      test('fencing one token leaves other tokens and other accounts alone', async () => {
        const [a, b] = env().slotPair();
        const [acct, other] = [fresh('acct'), fresh('acct')];
        await a.release(acct, 't1');
        expect(await b.tryAcquire(other, 't2')).toBe(true);
        await b.release(other, 't2');
        expect(await a.tryAcquire(acct, 't3')).toBe(true);
        await a.release(acct, 't3');
      });
      test(`50 simultaneous connects spread over two instances: exactly ${stream.connectionsPerAccount} gets a slot`, async () => {
        const [a, b] = env().slotPair();
        const acct = fresh('acct');
        const got = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? b : a).tryAcquire(acct, `c${i}`)));
        expect(got.filter(Boolean)).toHaveLength(stream.connectionsPerAccount);
        await Promise.all(got.map((ok, i) => (ok ? (i % 2 ? b : a).release(acct, `c${i}`) : undefined)));
        expect(await a.tryAcquire(acct, 'after')).toBe(true);
        await a.release(acct, 'after');
      });
    });
  });
  return () => count;
}

/**
 * The shared-state port suite on the Redis adapters (two connections = two instances), the lease of the
 * stream slots, and Redis-down behaviour (fallback wrappers, slots refusing) against a redis-server this
 * file starts, kills and restarts on a free port of its own (the shared one is never stopped).
 *
 * REDIS_TEST_URL (default redis://127.0.0.1:6379) must be reachable; when it is not, the suite is
 * skipped with a loud line, or fails when FNS_REQUIRE_ENGINES=1 (CI).
 */
import { freePort, hasRedisServer, PrivateRedis } from '../support/private-redis.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits, plans } from '../../src/contract/index.js';
import { SharedStateUnavailableError } from '../../src/state/errors.js';
import { FallbackIpGuard, FallbackRateLimiter, type FallbackPort } from '../../src/state/fallback.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../../src/state/memory.js';
import type { IpGuardOptions } from '../../src/state/ports.js';
import {
  createRedisState,
  DEFAULT_LEASE_MS,
  RedisIpGuard,
  DEFAULT_RENEW_MS,
  type RedisState,
  type RedisStateOptions,
} from '../../src/state/redis/index.js';
import { fresh, portSuite } from './ports.suite.js';
import { until } from '../support/wait.js';
import type { RateDecision } from '../../src/domain/rate-limit.js';

const url = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
const required = process.env.FNS_REQUIRE_ENGINES === '1';
const prefix = `fns-test:${process.pid}-${Date.now()}:`;
const WINDOW = limits.rateWindowMs;

async function reachable(): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
const up = await reachable();
const skip = !up;

if (required && !up) {
  describe('Redis engine', () => {
    it(`is reachable at ${url} (FNS_REQUIRE_ENGINES=1)`, () => {
      throw new Error(`Redis not reachable at ${url}, and FNS_REQUIRE_ENGINES=1 forbids skipping`);
    });
  });
}

/** Every state this file opens, closed (and its keys deleted) at the end. */
const opened: RedisState[] = [];
function open(options: Partial<RedisStateOptions> = {}, at = url, keyPrefix = prefix): RedisState {
  const s = createRedisState(at, { keyPrefix, ipGuardRules: limits.ipGuard, onError: () => {}, ...options });
  opened.push(s);
  return s;
}
/** Two instances: two connections sharing one prefix. */
let one: RedisState;
let two: RedisState;
let admin: Redis;

beforeAll(async () => {
  if (skip) return;
  admin = new Redis(url, { maxRetriesPerRequest: 1 });
  one = open();
  two = open();
  await Promise.all([one.ready(), two.ready()]);
});

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  if (skip) return;
  // Clean up this run's keys (they all carry a TTL anyway).
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  admin.disconnect();
});

const suiteCount = portSuite(
  'redis adapters',
  () => ({
    rateLimiters: () => [one.rateLimiter, two.rateLimiter],
    ipGuards: (options?: IpGuardOptions) => {
      // The guard's options are per instance: one guard with them on each instance's connection.
      return [
        new RedisIpGuard(one.redis, prefix, limits.ipGuard, options),
        new RedisIpGuard(two.redis, prefix, limits.ipGuard, options),
      ];
    },
    slotPair: () => [one.slots, two.slots],
  }),
  { skip },
);

let count = 0;
const test = (title: string, fn: () => Promise<void>, timeout?: number) => {
  count++;
  it(title, fn, timeout);
};

describe.skipIf(skip)('redis: keys and scripts', () => {
  test("keeps each port's keys under one hash tag and the prefix, with a TTL", async () => {
    const keyId = fresh('key');
    await one.rateLimiter.hit(keyId, plans.pro.rateLimit, WINDOW, Date.now());
    const ip = fresh('ip');
    await one.ipGuard.check(ip, 'fp', Date.now());
    const keys = (await admin.keys(`${prefix}*`)).filter((k) => k.includes(keyId) || k.includes(ip));
    expect(keys.sort()).toEqual([`${prefix}{ip:${ip}}:keys`, `${prefix}{rl:${keyId}}`]);
    for (const k of keys) {
      const ttl = await admin.pttl(k);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(WINDOW);
    }
  });
});

describe.skipIf(skip)('redis: stream slot leases', () => {
  test(`uses a ${DEFAULT_LEASE_MS / 1000} s lease by default, renewed every ${DEFAULT_RENEW_MS / 1000} s: a dead instance's slot is free within 30 s`, async () => {
    const acct = fresh('acct');
    expect(one.slots.leaseMs).toBe(DEFAULT_LEASE_MS);
    expect(one.slots.renewMs).toBe(DEFAULT_RENEW_MS);
    expect(DEFAULT_LEASE_MS).toBeLessThanOrEqual(30_000);
    expect(DEFAULT_RENEW_MS * 3).toBeLessThan(DEFAULT_LEASE_MS);
    expect(await one.slots.tryAcquire(acct, 'c1')).toBe(true);
    const key = `${prefix}{slot:${acct}}`;
    const [[sec, usec], score, ttl] = await Promise.all([admin.time(), admin.zscore(key, 'c1'), admin.pttl(key)]);
    const serverNow = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    expect(Number(score) - serverNow).toBeGreaterThan(DEFAULT_LEASE_MS - 2000);
    expect(Number(score) - serverNow).toBeLessThanOrEqual(DEFAULT_LEASE_MS);
    expect(ttl).toBeGreaterThan(DEFAULT_LEASE_MS - 2000);
    expect(ttl).toBeLessThanOrEqual(DEFAULT_LEASE_MS);
    await one.slots.release(acct, 'c1');
    expect(await admin.exists(key)).toBe(0);
  });
  test('frees the slot of an instance whose heartbeat stopped once its lease runs out', async () => {
    const dying = open({ slots: { leaseMs: 400 } });
    await dying.ready();
    const acct = fresh('acct');
    expect(await dying.slots.tryAcquire(acct, 'dead')).toBe(true);
    dying.slots.close(); // as after kill -9: no more renewals, no release
    expect(await two.slots.tryAcquire(acct, 'next')).toBe(false);
    await until(() => two.slots.tryAcquire(acct, 'next'), 'the dead lease to run out', 5000, 50);
    await two.slots.release(acct, 'next');
  });
  test('keeps a held lease alive past its length while the heartbeat runs', async () => {
    const alive = open({ slots: { leaseMs: 400 } });
    const dying = open({ slots: { leaseMs: 400 } });
    await Promise.all([alive.ready(), dying.ready()]);
    const [acct, control] = [fresh('acct'), fresh('acct')];
    const key = `${prefix}{slot:${acct}}`;
    expect(await alive.slots.tryAcquire(acct, 'held')).toBe(true);
    const taken = Number(await admin.zscore(key, 'held'));
    // The control: a lease of the same length, taken after it, whose heartbeat stops at once.
    expect(await dying.slots.tryAcquire(control, 'dead')).toBe(true);
    dying.slots.close();
    // The held lease could have run out by now: the control's did.
    await until(() => two.slots.tryAcquire(control, 'next'), 'the control lease to run out', 5000, 50);
    // And the heartbeat has carried the held one past three lease lengths from when it was taken.
    await until(
      async () => Number(await admin.zscore(key, 'held')) > taken + 2 * 400,
      'renewals of the held lease',
      5000,
      50,
    );
    expect(await two.slots.tryAcquire(acct, 'other')).toBe(false);
    await two.slots.release(control, 'next');
    await alive.slots.release(acct, 'held');
    expect(await two.slots.tryAcquire(acct, 'other')).toBe(true);
    await two.slots.release(acct, 'other');
  });
  test('takes back a lease that ran out while the slot is still free (Redis restarted empty), and reports one that another connection took', async () => {
    const lost: string[] = [];
    const s = open({ slots: { leaseMs: 60_000, onLeaseLost: (a, c) => lost.push(`${a}/${c}`) } });
    await s.ready();
    const [taken, free, kept] = [fresh('acct'), fresh('acct'), fresh('acct')];
    expect(await s.slots.tryAcquire(taken, 'c1')).toBe(true);
    expect(await s.slots.tryAcquire(free, 'c2')).toBe(true);
    expect(await s.slots.tryAcquire(kept, 'c3')).toBe(true);
    // As when the leases are gone (expired during a long cut, or an empty Redis after a restart):
    await admin.del(`${prefix}{slot:${taken}}`, `${prefix}{slot:${free}}`);
    expect(await two.slots.tryAcquire(taken, 'taker')).toBe(true);
    await s.slots.renew();
    expect(lost).toEqual([`${taken}/c1`]);
    expect(s.slots.inUse()).toBe(2);
    expect(await admin.zrange(`${prefix}{slot:${taken}}`, '0', '-1')).toEqual(['taker']);
    expect(await admin.zrange(`${prefix}{slot:${free}}`, '0', '-1')).toEqual(['c2']);
    expect(await admin.zrange(`${prefix}{slot:${kept}}`, '0', '-1')).toEqual(['c3']);
    expect(await two.slots.tryAcquire(free, 'other')).toBe(false);
    await two.slots.release(taken, 'taker');
    await s.slots.release(free, 'c2');
    await s.slots.release(kept, 'c3');
    expect(await admin.exists(`${prefix}{slot:${free}}`, `${prefix}{slot:${kept}}`)).toBe(0);
  });
});

/** The fallback hooks, recorded, on a clock of the test's: `nextProbe()` makes the next request a probe. */
function hooksLog() {
  const events: string[] = [];
  const decisions: Record<FallbackPort, number> = { rateLimiter: 0, ipGuard: 0 };
  let now = 0;
  return {
    events,
    decisions,
    nextProbe: () => void (now += 50),
    hooks: {
      probeIntervalMs: 50,
      now: () => now,
      onFallback: (port: FallbackPort, e: unknown) =>
        events.push(`fallback:${port}:${e instanceof Error ? 'error' : typeof e}`),
      onFallbackDecision: (port: FallbackPort) => void decisions[port]++,
      onRecover: (port: FallbackPort) => events.push(`recover:${port}`),
    },
  };
}

describe.skipIf(skip)('redis down', () => {
  test('nothing listening: the fallbacks decide from memory (hooks told), slots refuse with SharedStateUnavailableError', async () => {
    const port = await freePort();
    const down = open({}, `redis://127.0.0.1:${port}`);
    const log = hooksLog();
    const rl = new FallbackRateLimiter(down.rateLimiter, new MemoryRateLimiter(), log.hooks);
    const blocks: string[] = [];
    const guard = new FallbackIpGuard(
      down.ipGuard,
      new MemoryIpGuard(limits.ipGuard, { onBlock: (ip) => blocks.push(ip) }),
      log.hooks,
    );
    const now = Date.now();
    const limit = plans.pro.rateLimit;
    const got = [];
    for (let i = 0; i <= limit; i++) got.push(await rl.hit('k', limit, WINDOW, now + i));
    expect(got.filter((d) => d.admitted)).toHaveLength(limit);
    expect(got[limit]).toMatchObject({ admitted: false, remaining: 0 });
    for (let i = 0; i < limits.ipGuard.distinctKeys; i++) await guard.check('192.0.2.1', `fp${i}`, now);
    expect(blocks).toEqual(['192.0.2.1']);
    expect(log.events).toEqual(['fallback:rateLimiter:error', 'fallback:ipGuard:error']);
    expect(log.decisions).toEqual({ rateLimiter: limit + 1, ipGuard: limits.ipGuard.distinctKeys });
    expect(rl.degraded && guard.degraded).toBe(true);
    await expect(down.slots.tryAcquire('acct', 'c')).rejects.toBeInstanceOf(SharedStateUnavailableError);
    await expect(down.ping()).rejects.toThrow();
  });

  describe.skipIf(!hasRedisServer)('a redis-server of this file, killed and restarted', () => {
    let redis: PrivateRedis;
    let port = 0;
    const start = () => redis.start();
    const kill = () => redis.kill();
    beforeAll(async () => {
      redis = await PrivateRedis.onFreePort();
      port = redis.port;
      await start();
    });
    afterAll(kill);

    test('runs the script again after the server forgot it (SCRIPT FLUSH: NOSCRIPT → EVAL)', async () => {
      const own = open({}, `redis://127.0.0.1:${port}`);
      await own.ready();
      const admin = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
      const keyId = fresh('key');
      const now = Date.now();
      expect((await own.rateLimiter.hit(keyId, plans.starter.rateLimit, WINDOW, now)).admitted).toBe(true);
      await admin.script('FLUSH'); // on this file's server only: the shared one is left alone
      expect((await own.rateLimiter.hit(keyId, plans.starter.rateLimit, WINDOW, now + 1)).admitted).toBe(false);
      expect(await admin.exists(`${prefix}{rl:${keyId}}`)).toBe(1);
      admin.disconnect();
    });

    test('hung (SIGSTOP): a request gets its answer from memory after the command timeout instead of waiting; slots refuse; answered again after SIGCONT', async () => {
      const state = open({}, `redis://127.0.0.1:${port}`);
      await state.ready();
      const log = hooksLog();
      const rl = new FallbackRateLimiter(state.rateLimiter, new MemoryRateLimiter(), log.hooks);
      const limit = plans.pro.rateLimit;
      expect((await rl.hit('hung', limit, WINDOW, Date.now())).admitted).toBe(true);
      redis.signal('SIGSTOP');
      try {
        const started = Date.now();
        expect((await rl.hit('hung', limit, WINDOW, Date.now())).admitted).toBe(true);
        // Bounded by the command timeout (a few hundred ms), far below a client's patience.
        expect(Date.now() - started).toBeLessThan(5000);
        expect(log.events).toEqual(['fallback:rateLimiter:error']);
        await expect(state.slots.tryAcquire('acct-hung', 'c')).rejects.toBeInstanceOf(SharedStateUnavailableError);
      } finally {
        redis.signal('SIGCONT');
      }
      await until(
        async () => {
          log.nextProbe();
          await rl.hit('hung', limit, WINDOW, Date.now());
          return !rl.degraded;
        },
        'a probe answered by Redis',
        10_000,
        60,
      );
      expect(log.events).toEqual(['fallback:rateLimiter:error', 'recover:rateLimiter']);
    }, 30_000);

    test('serves from memory while it is down (hooks once per outage), refuses stream slots, and uses Redis again once it is back', async () => {
      const state = open({}, `redis://127.0.0.1:${port}`);
      await state.ready();
      const log = hooksLog();
      const rl = new FallbackRateLimiter(state.rateLimiter, new MemoryRateLimiter(), log.hooks);
      const guard = new FallbackIpGuard(state.ipGuard, new MemoryIpGuard(limits.ipGuard), log.hooks);
      const limit = plans.starter.rateLimit;
      const t0 = Date.now();
      expect((await rl.hit('k', limit, WINDOW, t0)).admitted).toBe(true);
      expect((await guard.check('192.0.2.7', 'fp', t0)).allowed).toBe(true);
      expect(await state.slots.tryAcquire('acct', 'before')).toBe(true);
      expect(log.decisions).toEqual({ rateLimiter: 0, ipGuard: 0 });

      await kill();
      // Memory has not seen the key: the fallback admits it (each instance applies the plan on its own).
      expect((await rl.hit('k', limit, WINDOW, t0 + 1)).admitted).toBe(true);
      expect((await rl.hit('k', limit, WINDOW, t0 + 2)).admitted).toBe(false);
      expect((await guard.check('192.0.2.7', 'fp', t0 + 1)).allowed).toBe(true);
      await expect(state.slots.tryAcquire('acct2', 'during')).rejects.toBeInstanceOf(SharedStateUnavailableError);
      await expect(state.slots.release('acct', 'before')).rejects.toThrow();
      expect(log.events).toEqual(['fallback:rateLimiter:error', 'fallback:ipGuard:error']);
      expect(log.decisions).toEqual({ rateLimiter: 2, ipGuard: 1 });

      await start(); // empty: nothing persisted
      await state.ready(10_000);
      let d: RateDecision | undefined;
      await until(
        async () => {
          log.nextProbe();
          d = await rl.hit('k', limit, WINDOW, t0 + 3);
          return !rl.degraded;
        },
        'a probe answered by Redis',
        10_000,
        60,
      );
      // The fresh Redis decided: it has not seen the key (memory would refuse it).
      expect(d?.admitted).toBe(true);
      const fresh = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
      expect(await fresh.exists(`${prefix}{rl:k}`)).toBe(1);
      const before = log.decisions.rateLimiter;
      expect((await rl.hit('k', limit, WINDOW, t0 + 4)).admitted).toBe(false);
      expect(log.decisions.rateLimiter).toBe(before);
      expect(log.events).toContain('recover:rateLimiter');
      // The guard recovers on its next probe too.
      log.nextProbe();
      await guard.check('192.0.2.7', 'fp', t0 + 5);
      expect(guard.degraded).toBe(false);
      expect(await fresh.exists(`${prefix}{ip:192.0.2.7}:keys`)).toBe(1);
      expect(await state.slots.tryAcquire('acct2', 'after')).toBe(true);
      fresh.disconnect();
    }, 30_000);
  });
});

// Printed from the last describe body: the ones above have registered their tests by then.
if (skip)
  describe('redis: skip notice', () => {
    const line = `skipped ${suiteCount() + count} tests: Redis not reachable at ${url}${required ? '' : ' (set FNS_REQUIRE_ENGINES=1 to fail instead)'}`;
    console.warn(`\n${'!'.repeat(line.length)}\n${line}\n${'!'.repeat(line.length)}\n`);
    it.skip(line, () => {});
  });

/**
 * The fallback wrappers of the shared state, without Redis: a primary that can be made to fail stands
 * for an unreachable Redis; the fallback is the real in-memory adapter.
 */
import { describe, expect, it } from 'vitest';
import { limits, plans } from '../../src/contract/index.js';
import { FallbackIpGuard, FallbackRateLimiter, type FallbackPort } from '../../src/state/fallback.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../../src/state/memory.js';
import type { IpGuard, RateLimiter } from '../../src/state/ports.js';

const WINDOW = limits.rateWindowMs;
const PROBE = 40;

/** A primary backed by its own memory adapter, failing on demand, counting the calls it gets. */
class Flaky implements RateLimiter, IpGuard {
  failing = false;
  calls = 0;
  private readonly rl = new MemoryRateLimiter();
  private readonly guard = new MemoryIpGuard(limits.ipGuard);
  async hit(keyId: string, limit: number, windowMs: number, now: number) {
    this.calls++;
    if (this.failing) throw new Error('connection refused');
    return this.rl.hit(keyId, limit, windowMs, now);
  }
  async check(ip: string, fp: string | null, now: number) {
    this.calls++;
    if (this.failing) throw new Error('connection refused');
    return this.guard.check(ip, fp, now);
  }
}

/** The hooks, recording what they are told, and the probe interval's clock (moved by `pass`). */
function hooks() {
  const events: string[] = [];
  let decisions = 0;
  let now = 1_000_000;
  return {
    events,
    decisions: () => decisions,
    /** The probe interval passes (and no more). */
    pass: () => void (now += PROBE),
    /** Less than the probe interval passes. */
    passLess: () => void (now += PROBE - 1),
    hooks: {
      probeIntervalMs: PROBE,
      now: () => now,
      onFallback: (port: FallbackPort, e: unknown) => events.push(`fallback:${port}:${(e as Error).message}`),
      onFallbackDecision: () => void decisions++,
      onRecover: (port: FallbackPort) => events.push(`recover:${port}`),
    },
  };
}

describe('FallbackRateLimiter', () => {
  it('decides with the primary while it answers, without telling the hooks', async () => {
    const primary = new Flaky();
    const h = hooks();
    const rl = new FallbackRateLimiter(primary, new MemoryRateLimiter(), h.hooks);
    const limit = plans.pro.rateLimit;
    for (let i = 0; i <= limit; i++) expect((await rl.hit('k', limit, WINDOW, i)).admitted).toBe(i < limit);
    expect(primary.calls).toBe(limit + 1);
    expect(h.events).toEqual([]);
    expect(h.decisions()).toBe(0);
    expect(rl.degraded).toBe(false);
  });

  it('falls back to memory (the plan per instance), tells onFallback once per outage and counts every decision, probes the primary once per interval, and goes back to it when it answers', async () => {
    const primary = new Flaky();
    const h = hooks();
    const rl = new FallbackRateLimiter(primary, new MemoryRateLimiter(), h.hooks);
    const limit = plans.starter.rateLimit;
    expect((await rl.hit('k', limit, WINDOW, 0)).admitted).toBe(true);

    primary.failing = true;
    const during = [];
    for (let i = 1; i <= 5; i++) during.push(await rl.hit('k', limit, WINDOW, i));
    // The fallback has not seen the key: it admits the plan again, then refuses (the N × plan bound).
    expect(during.map((d) => d.admitted)).toEqual([true, false, false, false, false]);
    expect(h.events).toEqual(['fallback:rateLimiter:connection refused']);
    expect(h.decisions()).toBe(5);
    expect(primary.calls).toBe(2); // the failed call only: the others waited for the probe interval
    expect(rl.degraded).toBe(true);

    h.passLess();
    await rl.hit('k', limit, WINDOW, 6); // inside the interval: the primary is not asked
    expect(primary.calls).toBe(2);
    expect(h.decisions()).toBe(6);

    h.pass();
    await rl.hit('k', limit, WINDOW, 6); // the probe: fails, fallback decides, no new log line
    expect(primary.calls).toBe(3);
    expect(h.events).toHaveLength(1);
    expect(h.decisions()).toBe(7);

    primary.failing = false;
    h.pass();
    const back = await rl.hit('k', limit, WINDOW, 7);
    expect(back.admitted).toBe(false); // the primary's log: the request at 0 is still in its window
    expect(primary.calls).toBe(4);
    expect(h.decisions()).toBe(7);
    expect(h.events).toEqual(['fallback:rateLimiter:connection refused', 'recover:rateLimiter']);
    expect(rl.degraded).toBe(false);

    primary.failing = true; // a second outage is logged again
    await rl.hit('k', limit, WINDOW, 8);
    expect(h.events).toEqual([
      'fallback:rateLimiter:connection refused',
      'recover:rateLimiter',
      'fallback:rateLimiter:connection refused',
    ]);
  });
});

describe('FallbackIpGuard', () => {
  it('blocks from memory while the primary fails (onBlock of the fallback), and recovers', async () => {
    const primary = new Flaky();
    primary.failing = true;
    const h = hooks();
    const blocks: string[] = [];
    const guard = new FallbackIpGuard(
      primary,
      new MemoryIpGuard(limits.ipGuard, { onBlock: (ip) => blocks.push(ip) }),
      h.hooks,
    );
    const verdicts = [];
    for (let i = 0; i < limits.ipGuard.distinctKeys; i++) verdicts.push(await guard.check('192.0.2.9', `fp${i}`, i));
    expect(verdicts.map((v) => v.allowed)).toEqual([...Array(limits.ipGuard.distinctKeys - 1).fill(true), false]);
    expect(blocks).toEqual(['192.0.2.9']);
    expect(h.events).toEqual(['fallback:ipGuard:connection refused']);
    expect(h.decisions()).toBe(limits.ipGuard.distinctKeys);

    primary.failing = false;
    h.pass();
    // The primary never saw the block: it decides now.
    expect(await guard.check('192.0.2.9', 'fp0', 100)).toEqual({ allowed: true });
    expect(h.events).toEqual(['fallback:ipGuard:connection refused', 'recover:ipGuard']);
    expect(guard.degraded).toBe(false);
  });
});

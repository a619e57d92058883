/**
 * A slot must never outlive the connection attempt that asked for it. With the slot
 * store stalled (Redis under SIGSTOP), a connect is refused with 1013 once the request times out; the
 * request itself stays sent and runs when the store resumes. Without a token per attempt it then held
 * the account's slot for a connection that no longer existed (20 s of `1008 Only one stream connection
 * per account`). The attempt that gave up releases its token, which fences it: the late request holds
 * nothing, whichever of the two the store runs first.
 *
 * Deterministic with a fake stalled store (requests queue in order, as on one Redis connection, and the
 * test decides when they time out and when they run), then for real: a redis-server of this file
 * (never the shared one) stopped with SIGSTOP around a stream connect and resumed with SIGCONT.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { limits, stream } from '../../src/contract/index.js';
import { SharedStateUnavailableError } from '../../src/state/errors.js';
import { createRedisState, type RedisState } from '../../src/state/redis/index.js';
import { MEMORY_FENCE_MS, MemoryStreamSlots, type StreamSlots } from '../../src/state/stream-slots.js';
import { hasRedisServer, PrivateRedis } from '../support/private-redis.js';
import { connect, connectAdmitted, dropClients, startStream, waitFor, type StreamHarness } from './support.js';

const unavailable = stream.closeCodes.unavailable;

interface Sent {
  op: 'tryAcquire' | 'release';
  accountId: string;
  token: string;
  /** Rejects the caller's promise (the command timeout); undefined once timed out. */
  reject?: (e: Error) => void;
}

/** A slot store that can stall: while stalled, requests wait in the order sent and run on resume. */
class StalledSlots implements StreamSlots {
  readonly store = new MemoryStreamSlots();
  readonly sent: Sent[] = [];
  private stalled = false;

  inUse(): number {
    return this.store.inUse();
  }

  stall(): void {
    this.stalled = true;
  }

  tryAcquire(accountId: string, token: string): Promise<boolean> {
    if (!this.stalled) return this.store.tryAcquire(accountId, token);
    return new Promise((_resolve, reject) => void this.sent.push({ op: 'tryAcquire', accountId, token, reject }));
  }

  release(accountId: string, token: string): Promise<void> {
    if (!this.stalled) return this.store.release(accountId, token);
    return new Promise((_resolve, reject) => void this.sent.push({ op: 'release', accountId, token, reject }));
  }

  /** The caller's command timeout: every waiting caller gets the error; the requests stay sent. */
  timeOut(): void {
    for (const s of this.sent) {
      s.reject?.(new SharedStateUnavailableError('stream slots: Redis unavailable (Command timed out)'));
      s.reject = undefined;
    }
  }

  /**
   * The store runs what it was sent: in the order sent, or with the releases first (the take reaching it late by
   * another way).
   */
  async resume(order: 'as sent' | 'releases first'): Promise<{ op: string; result: unknown }[]> {
    this.stalled = false;
    const queue =
      order === 'as sent'
        ? this.sent.splice(0)
        : [...this.sent.filter((s) => s.op === 'release'), ...this.sent.filter((s) => s.op !== 'release')];
    this.sent.length = 0;
    const ran = [];
    for (const s of queue) ran.push({ op: s.op, result: await this.store[s.op](s.accountId, s.token) });
    return ran;
  }
}

let h: StreamHarness | undefined;
afterEach(async () => {
  expect(dropClients()).toEqual([]);
  await h?.close();
  h = undefined;
});

describe('a stream attempt that gave up on the slot store holds no slot when the store resumes (fake stalled store)', () => {
  it.each(['as sent', 'releases first'] as const)(
    'the store runs the requests %s: the late take holds nothing, the next connect opens',
    async (order) => {
      const slots = new StalledSlots();
      h = await startStream({ slots });
      const { key, account_id } = await h.key('pro');

      slots.stall();
      const refused = connect(h.url, { key });
      await waitFor(() => slots.sent.length === 1, 'the take request');
      slots.timeOut();
      expect(await refused.closed).toEqual(unavailable);
      // The attempt releases its token after giving up; that request waits behind the take.
      await waitFor(() => slots.sent.length === 2, 'the release of the token that gave up');
      const token = slots.sent[0]!.token;
      expect(slots.sent.map((s) => [s.op, s.accountId, s.token])).toEqual([
        ['tryAcquire', account_id, token],
        ['release', account_id, token],
      ]);
      slots.timeOut();

      const ran = await slots.resume(order);
      expect(ran).toEqual(
        order === 'as sent'
          ? [
              { op: 'tryAcquire', result: true },
              { op: 'release', result: undefined },
            ]
          : [
              { op: 'release', result: undefined },
              { op: 'tryAcquire', result: false },
            ],
      );
      expect(slots.inUse()).toBe(0);
      const next = await connectAdmitted(h, { key });
      expect(next.isOpen).toBe(true);
      expect(slots.inUse()).toBe(1);
    },
  );
});

describe.skipIf(!hasRedisServer)(
  'a stream connect around a real Redis SIGSTOP / SIGCONT leaves no phantom slot',
  () => {
    let redis: PrivateRedis | undefined;
    let state: RedisState | undefined;
    afterEach(async () => {
      redis?.signal('SIGCONT');
      await state?.close();
      await redis?.kill();
      redis = undefined;
      state = undefined;
    });

    it('1013 while Redis is stopped; once it resumes the account connects at once (not 1008), and the release is confirmed', async () => {
      redis = await PrivateRedis.onFreePort();
      await redis.start();
      state = createRedisState(redis.url, {
        keyPrefix: `fns-phantom:${process.pid}:`,
        ipGuardRules: limits.ipGuard,
        onError: () => {},
      });
      await state.ready();
      h = await startStream({ slots: state.slots });
      const { key, account_id } = await h.key('pro');
      // A service that has been serving: its scripts are loaded (a stalled EVALSHA then really runs on resume).
      const earlier = await connectAdmitted(h, { key });
      earlier.ws.close(1000);
      await earlier.closed;
      await waitFor(
        () => state!.slots.inUse() === 0 && state!.slots.pendingReleases() === 0,
        'the earlier connection released',
      );

      redis.signal('SIGSTOP');
      try {
        const refused = connect(h.url, { key });
        expect(await refused.closed).toEqual(unavailable);
      } finally {
        redis.signal('SIGCONT');
      }

      // Redis now runs the take it was sent while stopped, then the release the attempt sent after
      // giving up (a phantom slot would refuse this with 1008 for the lease, 20 s).
      const next = await connectAdmitted(h, { key });
      expect(next.isOpen).toBe(true);
      const members = await state.redis.zrange(`fns-phantom:${process.pid}:{slot:${account_id}}`, '0', '-1');
      expect(members).toHaveLength(1);
      // The release that timed out is retried by the heartbeat until Redis has run it.
      await state.slots.renew();
      expect(state.slots.pendingReleases()).toBe(0);
    }, 30_000);
  },
);

describe('memory slots: a fence lasts MEMORY_FENCE_MS, then is forgotten (memory stays bounded under reconnects)', () => {
  it('refuses a released token until the fence ends, and keeps no fence after it', async () => {
    let now = 0;
    const slots = new MemoryStreamSlots(1, { now: () => now });
    await slots.release('acct', 'gave-up');
    now = MEMORY_FENCE_MS - 1;
    expect(await slots.tryAcquire('acct', 'gave-up')).toBe(false);
    expect(await slots.tryAcquire('other-acct', 'gave-up')).toBe(true); // fenced for its account only
    now = MEMORY_FENCE_MS;
    expect(await slots.tryAcquire('acct', 'gave-up')).toBe(true);
  });
});

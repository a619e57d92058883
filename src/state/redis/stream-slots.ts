/**
 * Stream slots across instances: per account, a sorted set of the connections holding a slot, scored by
 * the end of their lease. Taking a slot is one Lua script (drop expired leases, then admit when fewer
 * than `perAccount` remain), so simultaneous connects on any number of instances race safely. Each
 * instance renews the leases of the connections it holds every `renewMs`; when an instance dies without
 * releasing (kill -9), its leases run out within `leaseMs` and the account can connect again.
 *
 * Clock: lease times come from Redis `TIME` inside the scripts (one clock for every instance; nothing
 * here depends on the callers' clocks being in sync). A renewal takes a lease that ran out back when
 * the slot is still free, so open streams keep their slots through a Redis restart.
 *
 * Fencing (the port's token rule, src/state/stream-slots.ts): a release removes the lease and records the
 * token in a second sorted set of the account (`…{slot:<account>}:fenced`, scored by when the fence
 * ends, `leaseMs` after the release); the take script refuses a fenced token. So the take request of
 * an attempt that gave up (Redis stalled, the command timed out, the client got 1013) can run when
 * Redis resumes and still hold nothing: the release the caller sent after it runs after it on the same
 * connection, and fences it should it come later by any other way.
 *
 * No fallback: when Redis does not answer, `tryAcquire` throws SharedStateUnavailableError (an
 * in-process decision would let an account hold one stream per instance). A `release` that fails is
 * rethrown (the caller logs it) and retried with every heartbeat until Redis has run it, so a slot is
 * freed as soon as Redis answers again instead of when its lease runs out.
 */
import type { Redis } from 'ioredis';
import { stream } from '../../contract/index.js';
import type { StreamSlots } from '../stream-slots.js';
import { SharedStateUnavailableError } from '../errors.js';
import { lua, runScript, slotKey } from './script.js';

/** A dead instance's slot is free again within this: a client reconnecting after a crash waits at most this long. */
export const DEFAULT_LEASE_MS = 20_000;
/** Unconfirmed releases kept for retrying (a reconnect storm during an outage must not grow memory without end). */
const MAX_UNRELEASED = 10_000;
/** Live instances renew their leases this often (a quarter of the lease: three renewals may fail). */
export const DEFAULT_RENEW_MS = 5_000;

const NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS[1] the account's leases, KEYS[2] its fenced tokens; ARGV: connectionId, perAccount, leaseMs.
 * Returns 1 when held, 0 when refused (no slot left, or the token is fenced). Also the renewal: a held
 * lease is extended, and one that ran out (Redis restarted empty, or cut off for longer than the lease)
 * is taken back when the slot is still free, so open streams keep their slot through an outage; when
 * another connection took it meanwhile, 0 (the lease is lost).
 */
const ACQUIRE = lua(`${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local lease = tonumber(ARGV[3])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`);

/**
 * KEYS[1] the account's leases, KEYS[2] its fenced tokens; ARGV: connectionId, fenceMs. Frees the
 * token's slot and fences the token for `fenceMs`. Returns 1.
 */
const RELEASE = lua(`${NOW_MS}
redis.call('ZREM', KEYS[1], ARGV[1])
local fence = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + fence, ARGV[1])
redis.call('PEXPIRE', KEYS[2], fence)
return 1
`);

export interface RedisStreamSlotsOptions {
  /** Slots per account (default: `connectionsPerAccount` of asyncapi.yaml). */
  perAccount?: number;
  /** Lease length in ms (default DEFAULT_LEASE_MS). */
  leaseMs?: number;
  /** Renewal period in ms (default DEFAULT_RENEW_MS, or a quarter of `leaseMs` when that is shorter). */
  renewMs?: number;
  /**
   * A held lease could not be renewed: it had run out (Redis restarted empty, or this instance was cut
   * off for longer than the lease) and another connection of the account holds the slot now. The caller
   * should close this connection. Not called for a failed renewal round (Redis unreachable): those are
   * retried at the next heartbeat.
   */
  onLeaseLost?: (accountId: string, connectionId: string) => void;
  /** A renewal round failed (Redis unreachable): for a log line. */
  onRenewError?: (error: unknown) => void;
}

export class RedisStreamSlots implements StreamSlots {
  /** connectionId → accountId of the slots this instance holds (renewed by the heartbeat). */
  private readonly held = new Map<string, string>();
  /** connectionId → accountId of releases Redis has not confirmed yet (retried by the heartbeat). */
  private readonly unreleased = new Map<string, string>();
  private readonly perAccount: number;
  readonly leaseMs: number;
  readonly renewMs: number;
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly options: RedisStreamSlotsOptions = {},
  ) {
    this.perAccount = options.perAccount ?? stream.connectionsPerAccount;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.renewMs = options.renewMs ?? Math.min(DEFAULT_RENEW_MS, Math.max(1, Math.floor(this.leaseMs / 4)));
    this.timer = setInterval(() => void this.renew(), this.renewMs);
    this.timer.unref();
  }

  private key(accountId: string): string {
    return slotKey(this.keyPrefix, 'slot', accountId);
  }

  /** The two keys of the scripts: the leases and the fenced tokens (one hash tag). */
  private keys(accountId: string): [string, string] {
    return [this.key(accountId), slotKey(this.keyPrefix, 'slot', accountId, ':fenced')];
  }

  async tryAcquire(accountId: string, connectionId: string): Promise<boolean> {
    let r: unknown;
    try {
      r = await runScript(this.redis, ACQUIRE, this.keys(accountId), [connectionId, this.perAccount, this.leaseMs]);
    } catch (e) {
      throw new SharedStateUnavailableError(
        `stream slots: Redis unavailable (${e instanceof Error ? e.message : String(e)})`,
        { cause: e },
      );
    }
    if (r !== 1) return false;
    this.held.set(connectionId, accountId);
    return true;
  }

  async release(accountId: string, connectionId: string): Promise<void> {
    this.held.delete(connectionId);
    this.unreleased.set(connectionId, accountId);
    // Bounded through a long outage: past the cap the oldest are left to their lease (`leaseMs`).
    if (this.unreleased.size > MAX_UNRELEASED) this.unreleased.delete(this.unreleased.keys().next().value!);
    await this.releaseScript(connectionId, accountId);
  }

  private async releaseScript(connectionId: string, accountId: string): Promise<void> {
    await runScript(this.redis, RELEASE, this.keys(accountId), [connectionId, this.leaseMs]);
    this.unreleased.delete(connectionId);
  }

  /** Releases Redis has not confirmed yet (for tests and diagnostics). */
  pendingReleases(): number {
    return this.unreleased.size;
  }

  /** One heartbeat round: retries unconfirmed releases, then renews every lease this instance holds (one pipelined round trip). */
  async renew(): Promise<void> {
    if (this.renewing || (this.held.size === 0 && this.unreleased.size === 0)) return;
    this.renewing = true;
    try {
      for (const [connectionId, accountId] of [...this.unreleased]) {
        try {
          await this.releaseScript(connectionId, accountId);
        } catch (e) {
          this.options.onRenewError?.(e);
          break; // Redis still not answering: the next round tries again
        }
      }
      if (this.held.size === 0) return;
      const [first] = this.held;
      // The first through runScript, so the script is cached (EVALSHA in a pipeline cannot fall back to EVAL).
      this.renewed(first!, await this.renewScript(first!));
      // The others read after that await: a connection released meanwhile is not renewed.
      const rest = [...this.held].filter(([c]) => c !== first![0]);
      if (rest.length === 0) return;
      const pipeline = this.redis.pipeline();
      for (const [connectionId, accountId] of rest)
        pipeline.evalsha(ACQUIRE.sha, 2, ...this.keys(accountId), connectionId, this.perAccount, this.leaseMs);
      const results = (await pipeline.exec()) ?? [];
      results.forEach(([err, r], i) => {
        if (err) this.options.onRenewError?.(err);
        else this.renewed(rest[i]!, r);
      });
    } catch (e) {
      this.options.onRenewError?.(e);
    } finally {
      this.renewing = false;
    }
  }

  private renewScript([connectionId, accountId]: [string, string]): Promise<unknown> {
    return runScript(this.redis, ACQUIRE, this.keys(accountId), [connectionId, this.perAccount, this.leaseMs]);
  }

  private renewed([connectionId, accountId]: [string, string], result: unknown): void {
    if (!this.held.has(connectionId)) {
      // Released while its renewal was under way: the release fences the token, so a renewal that
      // landed after it took nothing; one that landed before it is undone by it.
      return;
    }
    if (result === 1) return;
    this.held.delete(connectionId);
    this.options.onLeaseLost?.(accountId, connectionId);
  }

  /** Slots this instance holds (for tests and diagnostics). */
  inUse(): number {
    return this.held.size;
  }

  /** Stops the heartbeat (the leases then run out within `leaseMs` unless released). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

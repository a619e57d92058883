/**
 * Stream slots across instances: per account, a sorted set of connections scored by lease end (Redis `TIME`:
 * one clock), taken by one Lua script, so connects race safely. Instances renew leases every `renewMs`; a
 * dead one's lapse within `leaseMs`, and a renewal retakes a lapsed, still free slot (surviving a Redis
 * restart). A release fences the token (`…:fenced`, for `leaseMs`), so a stalled take landing after it
 * holds nothing. No fallback: `tryAcquire` throws; a failed `release` is retried every heartbeat.
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
 * KEYS[1] leases, KEYS[2] fenced tokens; ARGV: connectionId, perAccount, leaseMs. 1 held, 0 refused (full
 * or fenced). Also the renewal: a lapsed lease is retaken while the slot is free, else 0 (lost).
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

/** KEYS as ACQUIRE; ARGV: connectionId, fenceMs. Frees the token's slot and fences the token. Returns 1. */
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
  /** A lapsed lease was taken by another connection of the account: close this one (not for a failed round). */
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

  /** One heartbeat: retries unconfirmed releases, then renews every lease held here (one pipelined round trip). */
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
      // Released meanwhile: the release's fence voids or undoes this renewal.
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

/**
 * The Redis adapters (REDIS_URL), one connection per createRedisState. Short command timeouts and no offline
 * queue bound a request's wait to `commandTimeoutMs`; the client reconnects forever. Keys, each with a TTL,
 * one hash tag per script (Cluster-ready):
 *   <prefix>{rl:<keyId>}              zset  rate-limit log (score: admission ms)
 *   <prefix>{ip:<ip>}:keys            zset  key fingerprints presented by the IP (score: last seen ms)
 *   <prefix>{ip:<ip>}:block           str   end of the IP's block (ms)
 *   <prefix>{slot:<accountId>}        zset  stream leases (member: connection id, score: lease end ms)
 *   <prefix>{slot:<accountId>}:fenced zset  released connection ids (score: fence end ms)
 */
import { Redis } from 'ioredis';
import type { IpGuardRules } from '../../domain/ip-guard.js';
import type { IpGuardOptions } from '../ports.js';
import { RedisIpGuard } from './ip-guard.js';
import { RedisRateLimiter } from './rate-limiter.js';
import { RedisStreamSlots, type RedisStreamSlotsOptions } from './stream-slots.js';

export { RedisIpGuard } from './ip-guard.js';
export { RedisRateLimiter } from './rate-limiter.js';
export { DEFAULT_LEASE_MS, DEFAULT_RENEW_MS, RedisStreamSlots, type RedisStreamSlotsOptions } from './stream-slots.js';

const DEFAULT_KEY_PREFIX = 'fns:';
const DEFAULT_COMMAND_TIMEOUT_MS = 300;

export interface RedisStateOptions {
  /** Prepended to every key (default `fns:`); must not contain `{`. Tests use a fresh one per run. */
  keyPrefix?: string;
  /** The IP guard's numbers (limits.ipGuard of the contract). */
  ipGuardRules: IpGuardRules;
  /** IP_GUARD_EXEMPT and the block log, as for MemoryIpGuard. */
  ipGuard?: IpGuardOptions;
  /** Lease, renewal, lost-lease and renewal-error hooks of the stream slots. */
  slots?: RedisStreamSlotsOptions;
  /** A command that gets no answer within this fails (default 300 ms). */
  commandTimeoutMs?: number;
  /** Connection errors (reported at most once per outage, for a log line; the client keeps reconnecting). */
  onError?: (error: Error) => void;
  /** The connection is (again) ready. */
  onReady?: () => void;
}

export interface RedisState {
  rateLimiter: RedisRateLimiter;
  ipGuard: RedisIpGuard;
  slots: RedisStreamSlots;
  /** Resolves when Redis answers PING within the command timeout; rejects otherwise (for /readyz). */
  ping(): Promise<void>;
  /** Waits until the connection is ready (at start), rejecting after `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void>;
  /** Stops the slot heartbeat and closes the connection. */
  close(): Promise<void>;
  /** The underlying client (tests, diagnostics). */
  readonly redis: Redis;
}

export function createRedisState(url: string, options: RedisStateOptions): RedisState {
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  if (keyPrefix.includes('{') || keyPrefix.includes('}')) throw new Error('Redis keyPrefix must not contain { or }');
  const commandTimeout = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const redis = new Redis(url, {
    commandTimeout,
    connectTimeout: Math.max(1000, commandTimeout),
    // No offline queue: while disconnected a command fails at once instead of waiting for a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Reconnect forever, backing off to one attempt per second.
    retryStrategy: (times) => Math.min(times * 100, 1000),
    lazyConnect: false,
  });
  let down = false;
  redis.on('error', (e: Error) => {
    if (down) return;
    down = true;
    options.onError?.(e);
  });
  redis.on('ready', () => {
    down = false;
    options.onReady?.();
  });
  const slots = new RedisStreamSlots(redis, keyPrefix, options.slots);
  let closed = false;
  return {
    redis,
    rateLimiter: new RedisRateLimiter(redis, keyPrefix),
    ipGuard: new RedisIpGuard(redis, keyPrefix, options.ipGuardRules, options.ipGuard),
    slots,
    async ping() {
      const r = await redis.ping();
      if (r !== 'PONG') throw new Error(`Redis answered PING with ${r}`);
    },
    ready(timeoutMs = 5000) {
      if (redis.status === 'ready') return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          redis.off('ready', onReady);
          reject(new Error(`Redis not ready within ${timeoutMs} ms (${url.replace(/\/\/[^@/]*@/, '//***@')})`));
        }, timeoutMs);
        const onReady = () => {
          clearTimeout(timer);
          resolve();
        };
        redis.once('ready', onReady);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      slots.close();
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}

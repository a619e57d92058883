/** Admission's shared state (IP guard, rate limiter, stream slots): in Redis with REDIS_URL, else in this process. */
import { errorText, type Log } from '../domain/log.js';
import type { Config } from '../config/index.js';
import { limits } from '../contract/index.js';
import type { DependencyHealth } from '../ops/health.js';
import type { Metrics } from '../ops/metrics.js';
import { FallbackIpGuard, FallbackRateLimiter, type FallbackHooks } from '../state/fallback.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../state/memory.js';
import type { IpGuard, RateLimiter } from '../state/ports.js';
import { createRedisState } from '../state/redis/index.js';
import { MemoryStreamSlots, type StreamSlots } from '../state/stream-slots.js';

export interface ServiceState {
  /** One IP guard for REST and the stream: a key presented on either counts for the client IP. */
  ipGuard: IpGuard;
  rateLimiter: RateLimiter;
  slots: StreamSlots;
  /** Another connection took an account's slot (this instance lost Redis for longer than the lease). */
  onLeaseLost(drop: (connectionId: string) => void): void;
  /** The Redis readiness check, with Redis. */
  ping?: () => Promise<void>;
  close(): Promise<void>;
}

export async function openServiceState(
  config: Config,
  deps: { metrics: Metrics; log: Log; health: DependencyHealth },
): Promise<ServiceState> {
  const { metrics, log, health } = deps;
  const ipGuardOptions = {
    exempt: config.ipGuardExempt,
    onBlock: (ip: string, until: number) => {
      metrics.ipBlocks.inc();
      log.warn(
        {
          ip,
          until: new Date(until).toISOString(),
          keys: limits.ipGuard.distinctKeys,
          window_s: limits.ipGuard.windowMs / 1000,
        },
        'ip-guard: address blocked',
      );
    },
  };
  const lostLeases = new Set<(connectionId: string) => void>();
  const shared = config.redisUrl
    ? createRedisState(config.redisUrl, {
        keyPrefix: `${config.redisPrefix}:`,
        ipGuardRules: limits.ipGuard,
        ipGuard: ipGuardOptions,
        onError: (e) => {
          metrics.dependencyErrors.inc({ dependency: 'redis' });
          log.warn({ dependency: 'redis', err: e.message }, 'connection lost; reconnecting');
        },
        onReady: () => log.info({ dependency: 'redis' }, 'connected'),
        slots: {
          // The slot was taken while this instance lost Redis: drop this one (one connection per account).
          onLeaseLost: (_accountId, connectionId) => lostLeases.forEach((f) => f(connectionId)),
        },
      })
    : undefined;
  // No offline queue: until Redis is ready, REST decides in memory and new streams are refused (1013).
  await shared
    ?.ready(5000)
    .catch((e: Error) => log.warn({ dependency: 'redis', err: e.message }, 'serving without it until it is reachable'));
  const memoryIpGuard = new MemoryIpGuard(limits.ipGuard, ipGuardOptions);
  const memoryRateLimiter = new MemoryRateLimiter();
  // With Redis: shared by every instance; while Redis is down, each instance decides alone (logged, counted).
  const fallbackHooks: FallbackHooks = {
    onFallback: (port, e) => {
      metrics.dependencyErrors.inc({ dependency: 'redis' });
      log.warn(
        { dependency: 'redis', port, err: errorText(e) },
        'unreachable; deciding in this instance until it is back',
      );
    },
    onFallbackDecision: (port) =>
      metrics.sharedStateFallbacks.inc({ port: port === 'rateLimiter' ? 'rate_limiter' : 'ip_guard' }),
    onRecover: (port) => log.info({ dependency: 'redis', port }, 'reachable again; shared decisions resumed'),
  };
  return {
    ipGuard: shared ? new FallbackIpGuard(shared.ipGuard, memoryIpGuard, fallbackHooks) : memoryIpGuard,
    rateLimiter: shared
      ? new FallbackRateLimiter(shared.rateLimiter, memoryRateLimiter, fallbackHooks)
      : memoryRateLimiter,
    slots: shared ? health.watch('redis', shared.slots) : new MemoryStreamSlots(),
    onLeaseLost: (drop) => void lostLeases.add(drop),
    ...(shared ? { ping: () => shared.ping() } : {}),
    close: async () => {
      await shared?.close();
    },
  };
}

/**
 * The poller's settings and schedule rules (pure). Every number a feed or server sets is bounded before it is
 * used or stored: a feed's floor to [0, 24 h], a Retry-After to [0, 6 h]; NaN counts as unset.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { backoffMs } from './feed/index.js';

/** Every HTTP setting of the poller (FetchOptions), in one place: docs/sources.md quotes it. */
export const POLL_HTTP = {
  connectTimeoutMs: 5_000,
  timeoutMs: 20_000,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
} as const;

export const POLL_DEFAULTS = {
  /** Sources polled at the same time by one process. */
  concurrency: 8,
  /** A claimed source is this process's for this long: more than the whole fetch, parse and store may take. */
  leaseMs: POLL_HTTP.timeoutMs + 15_000,
  /** The schedule is read at least this often (sources polled by other instances, expired leases). */
  tickMs: 1_000,
  /** An add, pause, resume or remove is seen within this. */
  registryCheckMs: 250,
  /** Backoff never waits longer than this (unless the source's own interval is longer)... */
  backoffMaxMs: 30 * 60_000,
  /** ...but a server's Retry-After is obeyed up to this. */
  retryAfterMaxMs: 6 * 3600_000,
  /** A feed's ttl / sy:updatePeriod floor is honoured up to this. */
  feedFloorMaxMs: 24 * 3600_000,
  /** After the store failed (e.g. busy), the poll is retried this soon. */
  storeRetryMs: 2_000,
  /** Dedup records older than this are dropped. */
  seenRetentionMs: 30 * 24 * 3600_000,
  /** ...checked this often. */
  pruneEveryMs: 3600_000,
} as const;

const PACKAGE_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0';
  }
})();

/** `FinancialNewsService/0.1.0 (fns; feed poller)`: the service, its version and the brand. */
export function pollerUserAgent(brand: string): string {
  return `FinancialNewsService/${PACKAGE_VERSION} (${brand}; feed poller)`;
}

/** A process-wide id for leases: host, pid and a random part (two pollers in one process differ too). */
export function pollerOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** `ms` as whole milliseconds within [0, maxMs] (Infinity is maxMs); null when unset or no number. */
function boundedMs(ms: number | null, maxMs: number): number | null {
  if (ms === null || Number.isNaN(ms)) return null;
  return Math.min(maxMs, Math.max(0, Math.round(ms)));
}

/** A feed's floor (`<ttl>` or `sy:updatePeriod`, seconds) in ms, capped at 24 h; null unless a positive number. */
export function feedFloorMs(seconds: number | null): number | null {
  return seconds !== null && seconds > 0 ? boundedMs(seconds * 1000, POLL_DEFAULTS.feedFloorMaxMs) : null;
}

/** When a source is polled next after a success: its interval, or the feed's own floor when longer (capped at 24 h). */
export function nextPollAfterSuccess(now: number, everyMs: number, minIntervalMs: number | null): number {
  const floor = boundedMs(minIntervalMs, POLL_DEFAULTS.feedFloorMaxMs) ?? 0;
  return now + Math.max(everyMs, floor);
}

/** Next poll after `failures` failures in a row: jittered backoff, not before the interval; longer Retry-After wins. */
export function nextPollAfterFailure(
  now: number,
  everyMs: number,
  failures: number,
  retryAfterMs: number | null,
  random: () => number,
): number {
  const retryAfter = boundedMs(retryAfterMs, POLL_DEFAULTS.retryAfterMaxMs);
  const delay = backoffMs(failures, {
    baseMs: everyMs,
    maxMs: Math.max(everyMs, POLL_DEFAULTS.backoffMaxMs),
    retryAfterMs: retryAfter,
    random,
  });
  return now + Math.max(everyMs, delay, retryAfter ?? 0);
}

/** Wake-ups on any process's commits (LISTEN/NOTIFY, SQLite's directory watch): feed reader, webhooks, REST caches. */
import type { Log } from '../domain/log.js';
import type { Metrics } from '../ops/metrics.js';
import type { Store, WakeSubscription } from '../store/ports/index.js';

/** The feed reader's safety-net timer when commits wake it (a directory watch, LISTEN/NOTIFY). */
export const WOKEN_FEED_POLL_MS = 500;

export interface CommitWakes {
  /** Undefined when the store cannot follow commits: the readers run on their timers only. */
  feedWake: WakeSubscription | undefined;
  stop(): Promise<void>;
}

export async function followCommits(
  store: Pick<Store, 'changes'>,
  deps: { metrics: Metrics; log: Log; timerMs: () => number },
): Promise<CommitWakes> {
  const { metrics, log } = deps;
  const wakers = new Set<() => void>();
  const wakeAll = () => wakers.forEach((w) => w());
  const stop = await store.changes.follow({
    wake: wakeAll,
    onReconnect: () => {
      log.info({ dependency: 'database' }, 'feed notifications reconnected; reading what was committed meanwhile');
      wakeAll();
    },
    onError: (m) => {
      metrics.dependencyErrors.inc({ dependency: 'database' });
      log.warn({ dependency: 'database', err: m }, 'feed notifications failed');
    },
    onUnavailable: (m) =>
      log.info({ why: m, every_ms: deps.timerMs() }, 'no commit notifications; the feed is read on a timer'),
  });
  return {
    feedWake: stop
      ? (wake) => {
          wakers.add(wake);
          return () => wakers.delete(wake);
        }
      : undefined,
    stop: async () => {
      await stop?.();
    },
  };
}

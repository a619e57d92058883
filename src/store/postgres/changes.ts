/**
 * The change signal of the PostgreSQL store (src/store/ports/changes.ts): every article insert notifies
 * the schema's channel at commit (bus.ts), so `follow` wakes on every commit by any process; the other
 * changes (a key deactivated, a tier changed by the CLI) announce nothing, so the freshness generation
 * also moves every POLLING_PERIOD_MS.
 */
import { lineLog } from '../../domain/log.js';
import { pollingFreshness, type StoreChanges } from '../ports/changes.js';
import { listenFeed } from './bus.js';

export function pgChanges(
  schema: string,
  listen: { url: string; connectTimeoutMs?: number } | undefined,
): StoreChanges {
  return {
    async follow(hooks) {
      if (!listen) {
        hooks.onUnavailable('no connection to listen on');
        return undefined;
      }
      return listenFeed(listen.url, schema, {
        onSeq: () => hooks.wake(),
        onReconnect: () => hooks.onReconnect(),
        log: lineLog((m) => hooks.onError(m)),
        ...(listen.connectTimeoutMs !== undefined ? { connectTimeoutMs: listen.connectTimeoutMs } : {}),
      });
    },
    freshness: (options) => pollingFreshness(options),
  };
}

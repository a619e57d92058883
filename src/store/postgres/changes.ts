/** `follow` wakes on article commits (bus.ts); other changes announce nothing, so freshness also polls. */
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

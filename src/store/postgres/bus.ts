/**
 * The feed notification bus on PostgreSQL LISTEN/NOTIFY. Every article insert (any process: an
 * instance, the CLI) runs `pg_notify('fns_feed_<schema>', '<newest seq>')` in its transaction, so the
 * notification is delivered at commit, in commit order. `listenFeed` keeps one dedicated connection
 * LISTENing; when it drops it reconnects with backoff and, once LISTENing again, calls `onReconnect`:
 * the consumer then re-reads the change feed from its own cursor, so an article committed while the
 * connection was down is delivered too (and nothing twice: the cursor is the consumer's).
 */
import type { Log } from '../../domain/log.js';
import pg from 'pg';
import { checkSchema, connectionString, DEFAULTS, feedChannel } from './db.js';

export interface FeedListenerOptions {
  /** A commit made seq `seq` (and everything before it) readable. */
  onSeq(seq: number): void;
  /** LISTENing again after a lost connection: notifications may have been missed; re-read the feed. */
  onReconnect(): void;
  log?: Log;
  connectTimeoutMs?: number;
  /** A round trip on the listening connection every so often, to notice a silently dead peer; default 10 s. */
  heartbeatMs?: number;
  /** Reconnect backoff: first delay and cap; defaults 100 ms and 5 s. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Starts listening; resolves (with the function that stops it) once LISTEN is in place, or rejects when
 * the first connection fails. Later losses are retried forever, until the returned function is called.
 */
export async function listenFeed(
  url: string,
  schema: string,
  options: FeedListenerOptions,
): Promise<() => Promise<void>> {
  const channel = feedChannel(checkSchema(schema));
  const minBackoff = options.minBackoffMs ?? 100;
  const maxBackoff = options.maxBackoffMs ?? 5000;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let failures = 0;

  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({
      connectionString: connectionString(url),
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      query_timeout: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      keepAlive: true,
      application_name: 'fns feed listener',
    });
    let lost = false;
    const onLost = (why: string) => {
      if (lost) return;
      lost = true;
      clearInterval(heartbeat);
      c.removeAllListeners('notification');
      c.end().catch(() => {});
      if (closed) return;
      options.log?.warn({ why }, 'postgres feed listener connection lost; reconnecting');
      schedule();
    };
    c.on('error', (e) => onLost(e.message));
    c.on('end', () => onLost('connection ended'));
    c.on('notification', (m) => {
      if (m.channel !== channel) return;
      const seq = Number(m.payload);
      if (Number.isSafeInteger(seq)) options.onSeq(seq);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
    } catch (e) {
      lost = true;
      c.removeAllListeners();
      c.on('error', () => {});
      await c.end().catch(() => {});
      throw e;
    }
    heartbeat = setInterval(() => {
      c.query('SELECT 1').catch((e: Error) => onLost(`heartbeat: ${e.message}`));
    }, heartbeatMs);
    heartbeat.unref();
    return c;
  };

  const schedule = () => {
    client = undefined;
    const delay = Math.min(maxBackoff, minBackoff * 2 ** Math.min(failures, 16));
    failures++;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(
        (c) => {
          if (closed) {
            clearInterval(heartbeat);
            void c.end().catch(() => {});
            return;
          }
          client = c;
          failures = 0;
          options.log?.info({}, 'postgres feed listener reconnected');
          options.onReconnect();
        },
        (e: Error) => {
          if (closed) return;
          options.log?.warn({ err: e.message }, 'postgres feed listener reconnect failed; retrying');
          schedule();
        },
      );
    }, delay);
    retry.unref();
  };

  client = await connect();
  return async () => {
    closed = true;
    clearTimeout(retry);
    clearInterval(heartbeat);
    const c = client;
    client = undefined;
    if (c) {
      c.removeAllListeners('notification');
      await c.end().catch(() => {});
    }
  };
}

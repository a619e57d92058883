/**
 * The feed bus on PostgreSQL LISTEN/NOTIFY: every article insert notifies in its transaction, so notices arrive at
 * commit, in commit order. After a lost connection the listener reconnects with backoff and calls `onReconnect`:
 * the consumer re-reads the feed from its own cursor, so nothing committed meanwhile is missed or sent twice.
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
  /** The first reconnect delay (default 100 ms); it doubles on each failure up to MAX_BACKOFF_MS. */
  minBackoffMs?: number;
}

/** A round trip on the listening connection this often notices a silently dead peer. */
const HEARTBEAT_MS = 10_000;
const MAX_BACKOFF_MS = 5000;

/** Resolves with the stop function once LISTENing; rejects if the first connection fails; later losses are retried. */
export async function listenFeed(
  url: string,
  schema: string,
  options: FeedListenerOptions,
): Promise<() => Promise<void>> {
  const listener = new FeedListener(url, feedChannel(checkSchema(schema)), options);
  await listener.start();
  return () => listener.stop();
}

/** One LISTENing connection, one heartbeat, one pending retry; once stopped, nothing reconnects (late ones close). */
class FeedListener {
  private closed = false;
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** Failed attempts since the last connection (the backoff's exponent). */
  private failures = 0;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly options: FeedListenerOptions,
  ) {}

  /** The first connection: resolves once it LISTENs, rejects (nothing retried) when it fails. */
  async start(): Promise<void> {
    this.client = await this.connect();
  }

  /** Stops for good: no retry, no heartbeat, the listening connection (if any) closed. */
  async stop(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.heartbeat);
    const c = this.client;
    this.client = undefined;
    if (c) {
      c.removeAllListeners('notification');
      await c.end().catch(() => {});
    }
  }

  /** A LISTENing client whose loss (error, end, failed heartbeat) is handled once; a failed one is closed, rethrown. */
  private async connect(): Promise<pg.Client> {
    const c = this.newClient();
    let lost = false;
    const onLost = (why: string) => {
      if (lost) return;
      lost = true;
      this.connectionLost(c, why);
    };
    c.on('error', (e) => onLost(e.message));
    c.on('end', () => onLost('connection ended'));
    c.on('notification', (m) => this.notified(m));
    try {
      await c.connect();
      await c.query(`LISTEN ${this.channel}`);
    } catch (e) {
      lost = true;
      await closeFailed(c);
      throw e;
    }
    this.heartbeat = setInterval(() => {
      c.query('SELECT 1').catch((e: Error) => onLost(`heartbeat: ${e.message}`));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    return c;
  }

  private newClient(): pg.Client {
    const timeout = this.options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
    return new pg.Client({
      connectionString: connectionString(this.url),
      connectionTimeoutMillis: timeout,
      query_timeout: timeout,
      keepAlive: true,
      application_name: 'fns feed listener',
    });
  }

  /** A notification on our channel whose payload is a safe integer is passed on as a seq; others are ignored. */
  private notified(m: pg.Notification): void {
    if (m.channel !== this.channel) return;
    const seq = Number(m.payload);
    if (Number.isSafeInteger(seq)) this.options.onSeq(seq);
  }

  private connectionLost(c: pg.Client, why: string): void {
    clearInterval(this.heartbeat);
    c.removeAllListeners('notification');
    c.end().catch(() => {});
    if (this.closed) return;
    this.options.log?.warn({ why }, 'postgres feed listener connection lost; reconnecting');
    this.schedule();
  }

  private schedule(): void {
    this.client = undefined;
    const minBackoff = this.options.minBackoffMs ?? 100;
    const delay = Math.min(MAX_BACKOFF_MS, minBackoff * 2 ** Math.min(this.failures, 16));
    this.failures++;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect().then(
        (c) => this.reconnected(c),
        (e: Error) => this.reconnectFailed(e),
      );
    }, delay);
    this.retry.unref();
  }

  /** LISTENing again: the consumer re-reads the feed (`onReconnect`); a connection completed after stop is closed. */
  private reconnected(c: pg.Client): void {
    if (this.closed) {
      clearInterval(this.heartbeat);
      void c.end().catch(() => {});
      return;
    }
    this.client = c;
    this.failures = 0;
    this.options.log?.info({}, 'postgres feed listener reconnected');
    this.options.onReconnect();
  }

  private reconnectFailed(e: Error): void {
    if (this.closed) return;
    this.options.log?.warn({ err: e.message }, 'postgres feed listener reconnect failed; retrying');
    this.schedule();
  }
}

async function closeFailed(c: pg.Client): Promise<void> {
  c.removeAllListeners();
  c.on('error', () => {});
  await c.end().catch(() => {});
}

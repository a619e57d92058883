/**
 * The WebSocket firehose of asyncapi.yaml, on the HTTP server of the REST API (same port, path
 * `streamAddress`): an adapter on the delivery core (src/delivery `DeliveryHub`). Every rule and text
 * comes from `stream` (the `x-stream` extension of the contract). The service runs it over the store's
 * change feed; the partner mock runs the same adapter over a MemoryFeed of the sample articles.
 *
 * - Admission happens before the WebSocket handshake completes: IP guard and key (the shared
 *   `authenticate()`), then the plan, then the account's stream slot. A refused client still gets a
 *   WebSocket, closed at once with `1008` and the contract's reason (the spec's signal for rejection).
 * - Admission order: key (IP guard, key, active), plan, then the connection parameters (`after`,
 *   `tickers`), then the account's slot: a connection refused for its parameters never takes the slot,
 *   and a client learns of a parameter it must fix even while its account's stream is open elsewhere.
 * - An admitted connection becomes a subscriber of the hub, its sink the upgraded socket: the hub owns
 *   the cursor, the replay from `after`, the `tickers` filter, the frames per variant, the pacing and the
 *   slow-consumer rule (src/delivery/hub.ts). `wake()` reads the feed at once (a writer in this
 *   process); other processes wake it through `feedWake` (LISTEN/NOTIFY, the data directory watch).
 * - Re-check, keep-alive (replaying connections included) and the closing handshake each run on one
 *   timer for all connections, here.
 */
import { errorText, silentLog, type Log } from '../domain/log.js';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { WebSocket, WebSocketServer } from 'ws';
import { authenticate } from '../auth/index.js';
import { stream, streamAddress } from '../contract/index.js';
import { streamRules } from '../../generated/stream.js';
import {
  DeliveryHub,
  DEFAULT_FEED_POLL_MS,
  FAN_OUT_SLICE_MS,
  type FeedPort,
  type Sink,
  type Subscriber,
} from '../delivery/index.js';
import type { IpGuard } from '../state/ports.js';
import { hashKey } from '../store/ports/ids.js';
import type { AccountStore, FeedEntry } from '../store/ports/index.js';
import { acceptUpgradeFor } from '../http/server.js';
import { isDependencyUnavailable } from '../http/unavailable.js';
import {
  admissionOutcome,
  clientIpResolver,
  keyFromRequest,
  recheckOutcome,
  type CloseSpec,
  type StreamAdmission,
} from './admission.js';
import { streamParams, type StreamParams } from './params.js';
import type { StreamSlots } from '../state/stream-slots.js';

export { REPLAY_PAGE, DEFAULT_FEED_POLL_MS } from '../delivery/index.js';

export interface StreamDeps {
  accounts: AccountStore;
  /** The change feed: the store, or a MemoryFeed (the mock). */
  articles: FeedPort;
  ipGuard: IpGuard;
  /** Prefix of the keys this service accepts, e.g. `fns_live_`. */
  livePrefix: string;
  clock: () => number;
  /** As Express's `trust proxy` setting (TRUST_PROXY). */
  trustProxy: boolean | number | string;
  slots: StreamSlots;
  /** Subscription re-check interval (STREAM_RECHECK_MS; the contract's `recheckSeconds` by default). */
  recheckMs: number;
  /** Default: the contract's `pingIntervalSeconds`. */
  pingIntervalMs?: number;
  /**
   * How often the change feed is read. Default 100 ms (articles reach clients well within 1 s); with a
   * notification bus (`feedWake`) this is only the safety net.
   */
  feedPollMs?: number;
  /**
   * A notification bus: `subscribe(wake)` calls `wake` when a commit announces new articles (and after
   * a reconnect); returns an unsubscribe function. The poller then reads the feed at once.
   */
  feedWake?: (wake: () => void) => () => void;
  /** Default: the contract's `maxBufferedBytes`. */
  maxBufferedBytes?: number;
  /** Longest slice of fan-out writes before yielding to the event loop. Default FAN_OUT_SLICE_MS. */
  fanOutSliceMs?: number;
  /** Told the length (ms) of every fan-out slice: how long delivery held the event loop (metrics, benchmarks). */
  onFanOutSlice?: (ms: number) => void;
  log?: Log;
  /** Connection events and deliveries, for the structured log and the metrics (src/ops). With it, open and close are told here instead of `log`. */
  events?: StreamEvents;
}

/** What the stream tells the operations side. Never a key: the key id and the account. */
export interface StreamEvents {
  opened(e: { connectionId: string; accountId: string; keyId: string }): void;
  closed(e: { connectionId: string; accountId: string; keyId: string; code: number; durationMs: number }): void;
  refused(e: { connectionId: string; code: number; reason: string }): void;
  /** A batch was written to the clients at `now` (the stream's clock). */
  delivered(batch: readonly FeedEntry[], now: number): void;
}

export interface StreamHandle {
  /** Resolves once the feed cursor is at the end of the feed (articles from then on are delivered). */
  ready: Promise<void>;
  /** Closes every connection with `1001` `Server shutting down`, stops the timers, detaches. */
  close(): Promise<void>;
  /** Open, admitted connections, replaying or live (not counting those being closed). */
  connections(): number;
  /**
   * Closes the connection with this id (e.g. its shared slot lease was lost to another connection while
   * this instance could not reach Redis): `unavailable`, so the client retries and the slot rule decides.
   */
  drop(connectionId: string, why: string): void;
  /** The change-feed `seq` up to which every article has been handed to the clients (or skipped: nobody listening). */
  feedCursor(): number;
  /**
   * Reads the change feed now instead of at the next tick. For a writer in this process (e.g. an
   * operator endpoint that stores articles): call it after the insert has committed, and the new
   * articles go out at once. Cheap and coalesced: a wake during a read runs one more read right after.
   */
  wake(): void;
}

/** While a replay waits for its client to read, how often the send buffer is looked at besides 'drain'. */
const REPLAY_DRAIN_POLL_MS = 50;
/** Clients send nothing; anything larger than this from a client ends its connection (1009). */
const INBOUND_MAX_BYTES = 16 * 1024;
/** How long `close()` waits for clients to answer the closing handshake before cutting them off. */
const SHUTDOWN_GRACE_MS = 2000;
/** How long any close waits for the peer's close frame before the socket is destroyed (asyncapi.yaml). */
export const CLOSE_HANDSHAKE_MS = stream.closeHandshakeSeconds * 1000;
const INTERNAL_ERROR: CloseSpec = { code: 1011, reason: '' };

/**
 * An admitted connection: the hub's sink, writing to the upgraded socket itself (whole frames, in
 * order with the pings and closes `ws` writes). A class: its methods are shared, not closures per
 * connection.
 */
class Connection implements Sink {
  /** Its subscription in the hub (set right after admission). */
  sub!: Subscriber<Connection>;
  /** A pong (or the connection itself) since the last ping. */
  alive = true;
  /** Closed by the server, waiting for the close to flush; seen by one keep-alive tick already. */
  drainSeen = false;

  constructor(
    readonly id: string,
    readonly ws: WebSocket,
    /** The upgraded TCP socket, which `ws` writes to as well. */
    readonly socket: Duplex,
    readonly accountId: string,
    readonly keyId: string,
    /** Only the hash of the key is kept, for the re-check. */
    readonly keyHash: string,
    /** Told when the hub (or the adapter, through the hub) ends it: closes the WebSocket. */
    private readonly onEnd: (conn: Connection, spec: CloseSpec, why: string) => void,
  ) {}

  open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  buffered(): number {
    return this.ws.bufferedAmount;
  }

  write(frames: Buffer[]): void {
    const socket = this.socket;
    if (frames.length === 1) {
      socket.write(frames[0]!);
      return;
    }
    socket.cork();
    for (const f of frames) socket.write(f);
    socket.uncork();
  }

  drained(): Promise<void> {
    const socket = this.socket;
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      // 'drain' when the socket's queue empties; the timer covers frames queued inside `ws` itself.
      const timer = setTimeout(done, REPLAY_DRAIN_POLL_MS);
      socket.once('drain', done);
      socket.once('close', done);
    });
  }

  end(spec: CloseSpec, why: string): void {
    this.onEnd(this, spec, why);
  }
}

type Outcome =
  | (Extract<StreamAdmission, { ok: true }> & { keyHash: string; fromSeq: number; params: StreamParams })
  | { ok: false; close: CloseSpec };

export function attachStream(server: Server, deps: StreamDeps): StreamHandle {
  const firehose = new Firehose(server, deps);
  return {
    ready: firehose.hub.ready,
    connections: () => firehose.hub.size,
    drop(connectionId, why) {
      for (const sub of firehose.hub.subscribers())
        if (sub.sink.id === connectionId) firehose.hub.end(sub, stream.closeCodes.unavailable, why);
    },
    feedCursor: () => firehose.hub.cursor,
    wake: () => firehose.hub.wake(),
    close: () => firehose.close(),
  };
}

/** The stream on one HTTP server: admission at the upgrade, the hub's subscribers, the timers, shutdown. */
class Firehose {
  readonly hub: DeliveryHub<Connection>;
  private readonly log: Log;
  private readonly clientIp: ReturnType<typeof clientIpResolver>;
  private readonly wss: WebSocketServer;
  /** Admitted, closed by the server (re-check, slow consumer), not yet gone. */
  private readonly draining = new Set<Connection>();
  /** Every upgraded WebSocket until its close, admitted or not (for shutdown). */
  private readonly sockets = new Set<WebSocket>();
  /** Upgrades whose admission is still running. */
  private readonly admitting = new Set<Promise<void>>();
  private shuttingDown = false;
  private rechecking = false;
  private readonly pinger: NodeJS.Timeout;
  private readonly rechecker: NodeJS.Timeout;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void =>
    this.upgrade(req, socket, head);
  private closed: Promise<void> | undefined;

  constructor(
    private readonly server: Server,
    private readonly deps: StreamDeps,
  ) {
    this.log = deps.log ?? silentLog;
    this.clientIp = clientIpResolver(deps.trustProxy);
    // A peer that does not answer our close frame (refused at admission, slow consumer, re-check) is cut
    // off CLOSE_HANDSHAKE_MS later, not after ws's default 30 s.
    // (ws, pinned, reads `closeTimeout`; its typings do not list it yet, hence the variable.)
    const wsOptions = {
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: INBOUND_MAX_BYTES,
      closeTimeout: CLOSE_HANDSHAKE_MS,
    };
    this.wss = new WebSocketServer(wsOptions);
    // Delivery: the hub owns cursors, replay, filters, frames, pacing and the slow-consumer rule.
    this.hub = new DeliveryHub<Connection>({
      feed: deps.articles,
      clock: deps.clock,
      feedPollMs: deps.feedPollMs ?? DEFAULT_FEED_POLL_MS,
      ...(deps.feedWake ? { feedWake: deps.feedWake } : {}),
      maxBufferedBytes: deps.maxBufferedBytes ?? stream.maxBufferedBytes,
      slowClose: stream.closeCodes.slowConsumer,
      replayFailedClose: (e) => (isDependencyUnavailable(e) ? stream.closeCodes.unavailable : INTERNAL_ERROR),
      sliceMs: deps.fanOutSliceMs ?? FAN_OUT_SLICE_MS,
      ...(deps.onFanOutSlice ? { onSlice: deps.onFanOutSlice } : {}),
      delivered: (batch) => deps.events?.delivered(batch, deps.clock()),
      now: () => performance.now(),
      defer: (fn) => setImmediate(fn),
      log: this.log,
    });
    this.pinger = setInterval(() => this.ping(), deps.pingIntervalMs ?? stream.pingIntervalSeconds * 1000);
    this.pinger.unref();
    this.rechecker = setInterval(() => void this.recheck(), deps.recheckMs);
    this.rechecker.unref();
    server.on('upgrade', this.onUpgrade);
  }

  /** Keep-alive: ping every interval; no pong since the previous ping → terminate. */
  private ping(): void {
    for (const conn of this.draining) {
      if (conn.drainSeen) conn.ws.terminate();
      else conn.drainSeen = true;
    }
    for (const { sink: conn } of this.hub.subscribers()) {
      if (!conn.alive) {
        this.hub.remove(conn.sub);
        this.log.info({ connection: conn.id, account: conn.accountId }, 'no pong; terminating');
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }

  /** The subscription re-check (the store read directly: not a new use of the key for the IP guard). */
  private async recheck(): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    const { hub, deps } = this;
    try {
      const now = deps.clock();
      let n = 0;
      for (const sub of hub.subscribers()) {
        if (!hub.has(sub)) continue;
        const key = await deps.accounts.findKey(sub.sink.keyHash);
        const account = key ? await deps.accounts.getAccount(key.accountId) : undefined;
        const outcome = recheckOutcome(key, account, now);
        if (!hub.has(sub)) continue;
        if (!outcome.ok) hub.end(sub, outcome.close, 'subscription re-check');
        // Moved from max to pro with a filter: the filter needs the Max plan.
        else if (sub.tickers && !outcome.withTickers)
          hub.end(sub, streamRules.closeCodes.tickersRequireMax, 'subscription re-check');
        else sub.withTickers = outcome.withTickers;
        if (++n % 500 === 0) await new Promise<void>((r) => setImmediate(r));
      }
    } catch (e) {
      this.log.warn({ err: errorText(e) }, 're-check failed, connections kept');
    } finally {
      this.rechecking = false;
    }
  }
  /** Admission, before the handshake: key (IP guard, key, active), plan, parameters, then the account's slot. */
  private async admit(req: IncomingMessage, socket: Duplex, connectionId: string): Promise<Outcome> {
    const { deps, log } = this;
    const key = keyFromRequest(req.url, req.headers);
    const ip = this.clientIp(req.headers, req.socket.remoteAddress);
    const auth = await authenticate(deps, { ip, key, now: deps.clock(), allowBlockedTier: false });
    const outcome = admissionOutcome(auth);
    if (!outcome.ok) return outcome;
    // The connection parameters, before the slot: a refused connection never holds it.
    const params = streamParams(req.url, outcome.withTickers);
    if (!params.ok) return params;
    if (this.shuttingDown) return { ok: false, close: stream.closeCodes.shuttingDown };
    // The slot belongs to this TCP connection (its id is the attempt's token): freed when it goes,
    // whatever happens from here on.
    const release = (): void => {
      deps.slots
        .release(outcome.accountId, connectionId)
        .catch((e: unknown) => log.warn({ err: errorText(e) }, 'slot release failed'));
    };
    let acquired: boolean;
    try {
      acquired = await deps.slots.tryAcquire(outcome.accountId, connectionId);
    } catch (e) {
      // Given up (the shared state did not answer in time: 1013), but the request may still run when
      // it resumes: releasing the token fences it, so no slot is held for a connection that is gone.
      release();
      throw e;
    }
    if (!acquired) return { ok: false, close: stream.closeCodes.secondConnection };
    if (socket.destroyed) release();
    else socket.once('close', release);
    // Last step before the upgrade (nothing but promise continuations in between with the embedded
    // store): the connection carries what enters the store after this point, and nothing before it.
    const fromSeq = await deps.articles.latestSeq();
    return { ...outcome, keyHash: hashKey(key!), fromSeq, params: params.params };
  }

  /** A connection ended by the server (slow consumer, re-check, replay failure, lost slot): closed, waiting for the peer. */
  private readonly ended = (conn: Connection, spec: CloseSpec, why: string): void => {
    this.draining.add(conn);
    this.log.info({ connection: conn.id, account: conn.accountId, key: conn.keyId, code: spec.code, why }, 'closing');
    conn.ws.close(spec.code, spec.reason);
  };

  private open(ws: WebSocket, socket: Duplex, connectionId: string, outcome: Outcome): void {
    const { deps, log, hub, sockets, draining } = this;
    sockets.add(ws);
    ws.on('error', (e) => log.warn({ connection: connectionId, err: e.message }, 'socket error'));
    if (!outcome.ok || this.shuttingDown) {
      const close = outcome.ok ? stream.closeCodes.shuttingDown : outcome.close;
      deps.events?.refused({ connectionId, code: close.code, reason: close.reason });
      ws.on('close', () => sockets.delete(ws));
      ws.close(close.code, close.reason);
      return;
    }
    const conn = new Connection(
      connectionId,
      ws,
      socket,
      outcome.accountId,
      outcome.keyId,
      outcome.keyHash,
      this.ended,
    );
    conn.sub = hub.subscribe(conn, {
      fromSeq: outcome.fromSeq,
      withTickers: outcome.withTickers,
      tickers: outcome.params.tickers,
      after: outcome.params.after,
      tier: outcome.tier,
    });
    const openedAt = Date.now();
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('close', (code) => {
      hub.remove(conn.sub);
      draining.delete(conn);
      sockets.delete(ws);
      if (deps.events)
        deps.events.closed({
          connectionId: conn.id,
          accountId: conn.accountId,
          keyId: conn.keyId,
          code,
          durationMs: Date.now() - openedAt,
        });
      else log.info({ connection: conn.id, account: conn.accountId, code }, 'closed');
    });
    if (deps.events) deps.events.opened({ connectionId: conn.id, accountId: conn.accountId, keyId: conn.keyId });
    else log.info({ connection: conn.id, account: conn.accountId, key: conn.keyId }, 'open');
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!acceptUpgradeFor(streamAddress, req, socket)) return;
    const connectionId = randomUUID();
    // Until ws takes the socket over, an error (client gone) just ends it; the slot goes with it.
    const earlyError = (): void => {
      socket.destroy();
    };
    socket.on('error', earlyError);
    const work = (async () => {
      let outcome: Outcome;
      try {
        outcome = await this.admit(req, socket, connectionId);
      } catch (e) {
        this.log.error({ err: errorText(e) }, 'admission failed');
        // The database or the shared state (stream slots) cannot answer now: "retry later", not 1011.
        outcome = { ok: false, close: isDependencyUnavailable(e) ? stream.closeCodes.unavailable : INTERNAL_ERROR };
      }
      if (socket.destroyed) return;
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        socket.off('error', earlyError);
        this.open(ws, socket, connectionId, outcome);
      });
    })();
    this.admitting.add(work);
    work
      .catch((e: unknown) => {
        this.log.error({ err: errorText(e) }, 'upgrade failed');
        socket.destroy();
      })
      .finally(() => this.admitting.delete(work));
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      const { hub, sockets } = this;
      this.shuttingDown = true;
      this.server.off('upgrade', this.onUpgrade);
      clearInterval(this.pinger);
      clearInterval(this.rechecker);
      const serving = hub.subscribers();
      await hub.stop();
      await Promise.allSettled([...this.admitting]);
      const gone = [...sockets].map(
        (ws) => new Promise<void>((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once('close', () => r()))),
      );
      for (const { sink: conn } of [...serving, ...hub.subscribers()])
        conn.ws.close(stream.closeCodes.shuttingDown.code, stream.closeCodes.shuttingDown.reason);
      const grace = setTimeout(() => {
        for (const ws of sockets) ws.terminate();
      }, SHUTDOWN_GRACE_MS);
      await Promise.all(gone);
      clearTimeout(grace);
      await new Promise<void>((r) => this.wss.close(() => r()));
    })();
    return this.closed;
  }
}

/**
 * The WebSocket firehose of asyncapi.yaml on the REST port (`streamAddress`): an adapter on src/delivery,
 * every rule and text from the contract's `x-stream`. Admission completes before the handshake, in order
 * key (IP guard, key, active), plan, parameters, slot: a connection refused for its parameters never takes
 * the slot, and a refused client gets a WebSocket closed at once with the contract's code. Re-check,
 * keep-alive and closing handshakes each run on one timer for all connections.
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
import { acceptUpgradeFor, refuseHandshake } from '../http/server.js';
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
  /** How often the feed is read (default 100 ms); with `feedWake`, only the safety net. */
  feedPollMs?: number;
  /** A notification bus: calls `wake` on a commit (and after a reconnect); returns the unsubscribe. */
  feedWake?: (wake: () => void) => () => void;
  /** Default: the contract's `maxBufferedBytes`. */
  maxBufferedBytes?: number;
  /** Longest slice of fan-out writes before yielding to the event loop. Default FAN_OUT_SLICE_MS. */
  fanOutSliceMs?: number;
  /** Told the length (ms) of every fan-out slice (metrics, benchmarks). */
  onFanOutSlice?: (ms: number) => void;
  log?: Log;
  /** Connection events and deliveries (src/ops); when given, open and close go here instead of `log`. */
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
  /** Closes it with `unavailable` (e.g. its slot lease was lost): the client retries, and the slot rule decides. */
  drop(connectionId: string, why: string): void;
  /** The change-feed `seq` up to which every article has been handed to the clients (or skipped: nobody listening). */
  feedCursor(): number;
  /** Reads the feed now (coalesced); a writer in this process calls it after its insert commits. */
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

/** An admitted connection: the hub's sink, writing whole frames to the socket in order with `ws`'s pings and closes. */
class Connection implements Sink {
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
    // A peer that does not answer our close frame is cut off after CLOSE_HANDSHAKE_MS, not ws's default 30 s
    // (`closeTimeout` is missing from the pinned ws typings, hence the variable).
    const wsOptions = {
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: INBOUND_MAX_BYTES,
      closeTimeout: CLOSE_HANDSHAKE_MS,
    };
    this.wss = new WebSocketServer(wsOptions);
    // ws's own refusals (method, Sec-WebSocket-Key or -Version) leave as problems, like every HTTP error.
    this.wss.on('wsClientError', (error, socket) => refuseHandshake(socket, error));
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
    // The slot belongs to this TCP connection (its id is the token): freed when it goes, whatever happens.
    const release = (): void => {
      deps.slots
        .release(outcome.accountId, connectionId)
        .catch((e: unknown) => log.warn({ err: errorText(e) }, 'slot release failed'));
    };
    let acquired: boolean;
    try {
      acquired = await deps.slots.tryAcquire(outcome.accountId, connectionId);
    } catch (e) {
      // Given up (1013), but the request may still run later: releasing fences the token.
      release();
      throw e;
    }
    if (!acquired) return { ok: false, close: stream.closeCodes.secondConnection };
    if (socket.destroyed) release();
    else socket.once('close', release);
    // Last step before the upgrade: the connection carries what enters the store after this point, nothing before.
    const fromSeq = await deps.articles.latestSeq();
    return { ...outcome, keyHash: hashKey(key!), fromSeq, params: params.params };
  }

  /** A connection the server ended (slow consumer, re-check, replay failure, lost slot): closed, awaiting the peer. */
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

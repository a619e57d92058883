/**
 * The WebSocket firehose of asyncapi.yaml, on the HTTP server of the REST API (same port, path
 * `streamAddress`). Every rule and text comes from `stream` (the `x-stream` extension of the contract).
 *
 * - Admission happens before the WebSocket handshake completes: IP guard and key (the shared
 *   `authenticate()`), then the plan, then the account's stream slot. A refused client still gets a
 *   WebSocket, closed at once with `1008` and the contract's reason (the spec's signal for rejection).
 * - Fan-out: one feed poller follows the store's change feed (any process may insert); each batch is
 *   serialised and framed once per variant (with / without `tickers`) and the same bytes are written to
 *   every open connection, in time slices (fanout.ts): the event loop is never held for long, and each
 *   connection still gets the feed whole and in order. `wake()` reads the feed at once (a writer in
 *   this process); other processes wake it through `feedWake` (LISTEN/NOTIFY, the data directory watch).
 * - Resume (`after`): a connection admitted at feed position S first reads the feed itself, from the
 *   first article after max(`after`, the key's lookback window start) (replay.ts), page by page under
 *   the slow-consumer rule, through S and on until it reaches the point the fan-out has settled; it then
 *   joins the fan-out from exactly there. One cursor per connection: no gap, no duplicate at the seam.
 * - `tickers` (max keys) filters the replay and the live batches (params.ts, fanout.ts).
 * - Admission order: key (IP guard, key, active), plan, then the connection parameters (`after`,
 *   `tickers`), then the account's slot: a connection refused for its parameters never takes the slot,
 *   and a client learns of a parameter it must fix even while its account's stream is open elsewhere.
 * - Re-check, keep-alive (replaying connections included) and slow-consumer rules each run on one
 *   timer for all connections.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { WebSocket, WebSocketServer } from 'ws';
import { authenticate } from '../auth/index.js';
import { stream, streamAddress, type Tier } from '../contract/index.js';
import { streamRules } from '../../generated/stream.js';
import { presentArticle } from '../domain/articles.js';
import { effectiveSince } from '../domain/lookback.js';
import type { IpGuard } from '../state/ports.js';
import { hashKey } from '../store/ports/ids.js';
import type { AccountStore, ArticleStore, FeedEntry } from '../store/ports/index.js';
import { acceptUpgradeFor } from '../http/server.js';
import { isDependencyUnavailable } from '../http/unavailable.js';
import { admissionOutcome, clientIpResolver, keyFromRequest, recheckOutcome, type CloseSpec, type StreamAdmission } from './admission.js';
import { FanOut } from './fanout.js';
import { FeedPoller } from './feed.js';
import { textFrames } from './frames.js';
import { matchesTickers, replayLowerBound, streamParams, type StreamParams, type TickerFilter } from './params.js';
import { replayStartSeq } from './replay.js';
import type { StreamSlots } from '../state/stream-slots.js';

export { admissionOutcome, recheckOutcome, keyFromRequest, clientIpResolver, tierMayStream, type CloseSpec } from './admission.js';
export { streamParams, matchesTickers, replayLowerBound, type StreamParams, type TickerFilter, type ParamsOutcome } from './params.js';

export interface StreamDeps {
  accounts: AccountStore;
  articles: Pick<ArticleStore, 'feedAfter' | 'latestSeq'>;
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
  log?: (m: string) => void;
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

export const DEFAULT_FEED_POLL_MS = 100;
/** Longest run of socket writes before the fan-out yields to the event loop (goal: never blocked > 10 ms). */
export const FAN_OUT_SLICE_MS = 3;
/** Feed entries read per replay page (one page is filtered, framed and written, then the loop yields). */
export const REPLAY_PAGE = 200;
/** While a replay waits for its client to read, how often the send buffer is looked at besides 'drain'. */
const REPLAY_DRAIN_POLL_MS = 50;
/** Clients send nothing; anything larger than this from a client ends its connection (1009). */
const INBOUND_MAX_BYTES = 16 * 1024;
/** How long `close()` waits for clients to answer the closing handshake before cutting them off. */
const SHUTDOWN_GRACE_MS = 2000;
/** How long any close waits for the peer's close frame before the socket is destroyed (asyncapi.yaml). */
export const CLOSE_HANDSHAKE_MS = stream.closeHandshakeSeconds * 1000;
const INTERNAL_ERROR: CloseSpec = { code: 1011, reason: '' };

interface Connection {
  id: string;
  ws: WebSocket;
  /** The upgraded TCP socket, which `ws` writes to as well. */
  socket: Duplex;
  accountId: string;
  keyId: string;
  /** Only the hash of the key is kept, for the re-check. */
  keyHash: string;
  withTickers: boolean;
  /** The connection's `tickers` filter (max keys). */
  tickers: TickerFilter | undefined;
  /** The feed `seq` it has been served up to; at first the end of the feed when it was admitted (only later articles are its own). */
  sentSeq: number;
  /** A pong (or the connection itself) since the last ping. */
  alive: boolean;
  /** Closed by the server, waiting for the close to flush; seen by one keep-alive tick already. */
  drainSeen: boolean;
}

export function attachStream(server: Server, deps: StreamDeps): StreamHandle {
  const log = deps.log ?? (() => {});
  const pingIntervalMs = deps.pingIntervalMs ?? stream.pingIntervalSeconds * 1000;
  const maxBufferedBytes = deps.maxBufferedBytes ?? stream.maxBufferedBytes;
  const clientIp = clientIpResolver(deps.trustProxy);
  // A peer that does not answer our close frame (refused at admission, slow consumer, re-check) is cut
  // off CLOSE_HANDSHAKE_MS later, not after ws's default 30 s.
  // (ws, pinned, reads `closeTimeout`; its typings do not list it yet, hence the variable.)
  const wsOptions = { noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: INBOUND_MAX_BYTES, closeTimeout: CLOSE_HANDSHAKE_MS };
  const wss = new WebSocketServer(wsOptions);

  /** Admitted and open: the fan-out targets. */
  const live = new Set<Connection>();
  /** Admitted and open, still reading the older part of the feed from the store (`after`); they join `live`. */
  const replaying = new Set<Connection>();
  /** Admitted, closed by the server (re-check, slow consumer), not yet gone. */
  const draining = new Set<Connection>();
  /** Every upgraded WebSocket until its close, admitted or not (for shutdown). */
  const sockets = new Set<WebSocket>();
  /** Upgrades whose admission is still running. */
  const admitting = new Set<Promise<void>>();
  let shuttingDown = false;

  const end = (conn: Connection, spec: CloseSpec, why: string): void => {
    if (!live.delete(conn) && !replaying.delete(conn)) return;
    draining.add(conn);
    log(`stream: closing ${conn.id} account=${conn.accountId} key=${conn.keyId}: ${why} (${spec.code})`);
    conn.ws.close(spec.code, spec.reason);
  };

  // ---- fan-out ----

  const encode = (entries: readonly FeedEntry[], withTickers: boolean): Buffer =>
    textFrames(entries.map((e) => JSON.stringify(presentArticle(e.article, withTickers))));

  /** Writes frames to a connection (live or replaying) unless it is gone or over the slow-consumer bound. */
  const send = (conn: Connection, frames: Buffer[]): boolean => {
    const ws = conn.ws;
    if (ws.readyState !== WebSocket.OPEN) {
      live.delete(conn);
      replaying.delete(conn);
      return false;
    }
    if (ws.bufferedAmount > maxBufferedBytes) {
      end(conn, stream.closeCodes.slowConsumer, `send buffer ${ws.bufferedAmount} bytes`);
      return false;
    }
    // The upgrade socket itself: whole frames, in order with the pings and closes `ws` writes.
    const socket = conn.socket;
    if (frames.length === 1) {
      socket.write(frames[0]!);
      return true;
    }
    socket.cork();
    for (const f of frames) socket.write(f);
    socket.uncork();
    return true;
  };

  const fanOut = new FanOut<Connection>({
    targets: live,
    encode,
    send,
    delivered: (batch) => deps.events?.delivered(batch, deps.clock()),
    sliceMs: deps.fanOutSliceMs ?? FAN_OUT_SLICE_MS,
    ...(deps.onFanOutSlice ? { onSlice: deps.onFanOutSlice } : {}),
    now: () => performance.now(),
    defer: (fn) => setImmediate(fn),
  });

  const poller = new FeedPoller({
    articles: deps.articles,
    intervalMs: deps.feedPollMs ?? DEFAULT_FEED_POLL_MS,
    deliver: (batch) => {
      fanOut.push(batch);
      if (replaying.size > 0) holdToBound(batch);
    },
    hasListeners: () => live.size + replaying.size > 0,
    log,
  });
  const unsubscribeWake = deps.feedWake?.(() => poller.wake());
  const ready = (async () => {
    for (;;) {
      if (shuttingDown) return;
      try {
        await poller.start();
        return;
      } catch (e) {
        log(`stream: cannot read the article feed: ${e instanceof Error ? e.message : String(e)}; retrying`);
        await new Promise((r) => setTimeout(r, deps.feedPollMs ?? DEFAULT_FEED_POLL_MS));
      }
    }
  })();

  // ---- keep-alive: ping every interval; no pong since the previous ping → terminate ----

  const pinger = setInterval(() => {
    for (const conn of draining) {
      if (conn.drainSeen) conn.ws.terminate();
      else conn.drainSeen = true;
    }
    for (const conn of [...live, ...replaying]) {
      if (!conn.alive) {
        live.delete(conn);
        replaying.delete(conn);
        log(`stream: no pong from ${conn.id} account=${conn.accountId}; terminating`);
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }, pingIntervalMs);
  pinger.unref();

  // ---- subscription re-check (store read directly: not a new use of the key for the IP guard) ----

  let rechecking = false;
  const recheck = async (): Promise<void> => {
    if (rechecking) return;
    rechecking = true;
    try {
      const now = deps.clock();
      let n = 0;
      const isOpen = (conn: Connection): boolean => live.has(conn) || replaying.has(conn);
      for (const conn of [...live, ...replaying]) {
        if (!isOpen(conn)) continue;
        const key = await deps.accounts.findKey(conn.keyHash);
        const account = key ? await deps.accounts.getAccount(key.accountId) : undefined;
        const outcome = recheckOutcome(key, account, now);
        if (!isOpen(conn)) continue;
        if (!outcome.ok) end(conn, outcome.close, 'subscription re-check');
        // Moved from max to pro with a filter: the filter needs the Max plan.
        else if (conn.tickers && !outcome.withTickers) end(conn, streamRules.closeCodes.tickersRequireMax, 'subscription re-check');
        else conn.withTickers = outcome.withTickers;
        if (++n % 500 === 0) await new Promise<void>((r) => setImmediate(r));
      }
    } catch (e) {
      log(`stream: re-check failed, connections kept: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      rechecking = false;
    }
  };
  const rechecker = setInterval(() => void recheck(), deps.recheckMs);
  rechecker.unref();

  // ---- admission ----

  type Outcome = (Extract<StreamAdmission, { ok: true }> & { keyHash: string; fromSeq: number; params: StreamParams }) | { ok: false; close: CloseSpec };

  const admit = async (req: IncomingMessage, socket: Duplex, connectionId: string): Promise<Outcome> => {
    const key = keyFromRequest(req.url, req.headers);
    const ip = clientIp(req.headers, req.socket.remoteAddress);
    const auth = await authenticate(deps, { ip, key, now: deps.clock(), allowBlockedTier: false });
    const outcome = admissionOutcome(auth);
    if (!outcome.ok) return outcome;
    // The connection parameters, before the slot: a refused connection never holds it.
    const params = streamParams(req.url, outcome.withTickers);
    if (!params.ok) return params;
    if (shuttingDown) return { ok: false, close: stream.closeCodes.shuttingDown };
    // The slot belongs to this TCP connection (its id is the attempt's token): freed when it goes,
    // whatever happens from here on.
    const release = (): void => {
      deps.slots.release(outcome.accountId, connectionId).catch((e: unknown) => log(`stream: slot release failed: ${String(e)}`));
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
  };

  const open = (ws: WebSocket, socket: Duplex, connectionId: string, outcome: Outcome): void => {
    sockets.add(ws);
    ws.on('error', (e) => log(`stream: ${connectionId}: ${e.message}`));
    if (!outcome.ok || shuttingDown) {
      const close = outcome.ok ? stream.closeCodes.shuttingDown : outcome.close;
      deps.events?.refused({ connectionId, code: close.code, reason: close.reason });
      ws.on('close', () => sockets.delete(ws));
      ws.close(close.code, close.reason);
      return;
    }
    const conn: Connection = {
      id: connectionId,
      ws,
      socket,
      accountId: outcome.accountId,
      keyId: outcome.keyId,
      keyHash: outcome.keyHash,
      withTickers: outcome.withTickers,
      tickers: outcome.params.tickers,
      sentSeq: outcome.fromSeq,
      alive: true,
      drainSeen: false,
    };
    const after = outcome.params.after;
    if (after === undefined) live.add(conn);
    else {
      replaying.add(conn);
      void replay(conn, after, outcome.tier, outcome.fromSeq);
    }
    const openedAt = Date.now();
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('close', (code) => {
      live.delete(conn);
      replaying.delete(conn);
      draining.delete(conn);
      sockets.delete(ws);
      if (deps.events) deps.events.closed({ connectionId: conn.id, accountId: conn.accountId, keyId: conn.keyId, code, durationMs: Date.now() - openedAt });
      else log(`stream: closed ${conn.id} account=${conn.accountId} (${code})`);
    });
    if (deps.events) deps.events.opened({ connectionId: conn.id, accountId: conn.accountId, keyId: conn.keyId });
    else log(`stream: open ${conn.id} account=${conn.accountId} key=${conn.keyId}`);
  };

  // ---- resume: replay from the store, then join the fan-out ----

  /**
   * A replaying connection is owed every live batch too (it reads them from the store once it gets
   * there): when one arrives that concerns it, the slow-consumer rule of live delivery applies to it
   * exactly as to a live connection. With the replay paced by the client (below), this is what closes
   * a client that stopped reading during its replay while articles keep arriving.
   */
  const holdToBound = (batch: readonly FeedEntry[]): void => {
    for (const conn of replaying) {
      if (conn.ws.bufferedAmount <= maxBufferedBytes) continue;
      if (conn.tickers && !batch.some((e) => matchesTickers(e.article, conn.tickers))) continue;
      end(conn, stream.closeCodes.slowConsumer, `send buffer ${conn.ws.bufferedAmount} bytes during replay`);
    }
  };

  /**
   * Paces the replay by the client: the next page is written once the send buffer is at most half the
   * slow-consumer bound ("as fast as the client reads it"), so a client that reads is never pushed
   * over the bound by its own replay. False when the connection went meanwhile.
   */
  const roomFor = async (conn: Connection): Promise<boolean> => {
    while (replaying.has(conn) && conn.ws.bufferedAmount > maxBufferedBytes / 2) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          conn.socket.off('drain', done);
          conn.socket.off('close', done);
          resolve();
        };
        // 'drain' when the socket's queue empties; the timer covers frames queued inside `ws` itself.
        const timer = setTimeout(done, REPLAY_DRAIN_POLL_MS);
        conn.socket.once('drain', done);
        conn.socket.once('close', done);
      });
    }
    return replaying.has(conn);
  };

  const replay = async (conn: Connection, after: string, tier: Tier, admittedSeq: number): Promise<void> => {
    try {
      const bound = replayLowerBound(after, effectiveSince(tier, deps.clock(), undefined));
      let pos = await replayStartSeq(deps.articles, bound, admittedSeq);
      for (;;) {
        if (!replaying.has(conn)) return;
        if (pos >= admittedSeq && pos >= fanOut.settledSeq(poller.cursor)) {
          // Everything up to `pos` is written; every later entry is pending in the fan-out or not read
          // yet: from here the fan-out serves it, starting right after `pos` (synchronous hand-over).
          replaying.delete(conn);
          conn.sentSeq = pos;
          live.add(conn);
          return;
        }
        const page = await deps.articles.feedAfter(pos, REPLAY_PAGE);
        if (!replaying.has(conn)) return;
        if (page.length === 0) {
          // The feed reader is ahead of what this read saw (another connection's view): look again shortly.
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        pos = page[page.length - 1]!.seq;
        const entries = page.filter((e) => matchesTickers(e.article, conn.tickers));
        // Page by page (the replay is never read whole into memory), through the same `send` and its
        // slow-consumer check as live delivery.
        if (entries.length > 0 && !send(conn, [encode(entries, conn.withTickers)])) return;
        await new Promise<void>((r) => setImmediate(r));
        if (!(await roomFor(conn))) return;
      }
    } catch (e) {
      log(`stream: replay for ${conn.id} failed: ${e instanceof Error ? e.message : String(e)}`);
      end(conn, isDependencyUnavailable(e) ? stream.closeCodes.unavailable : INTERNAL_ERROR, 'replay failed');
    }
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
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
        outcome = await admit(req, socket, connectionId);
      } catch (e) {
        log(`stream: admission failed: ${e instanceof Error ? e.message : String(e)}`);
        // The database or the shared state (stream slots) cannot answer now: "retry later", not 1011.
        outcome = { ok: false, close: isDependencyUnavailable(e) ? stream.closeCodes.unavailable : INTERNAL_ERROR };
      }
      if (socket.destroyed) return;
      wss.handleUpgrade(req, socket, head, (ws) => {
        socket.off('error', earlyError);
        open(ws, socket, connectionId, outcome);
      });
    })();
    admitting.add(work);
    work
      .catch((e: unknown) => {
        log(`stream: upgrade failed: ${e instanceof Error ? e.message : String(e)}`);
        socket.destroy();
      })
      .finally(() => admitting.delete(work));
  };
  server.on('upgrade', onUpgrade);

  let closed: Promise<void> | undefined;
  return {
    ready,
    connections: () => live.size + replaying.size,
    drop(connectionId, why) {
      for (const conn of [...live, ...replaying]) if (conn.id === connectionId) end(conn, stream.closeCodes.unavailable, why);
    },
    feedCursor: () => poller.cursor,
    wake: () => poller.wake(),
    close() {
      closed ??= (async () => {
        shuttingDown = true;
        server.off('upgrade', onUpgrade);
        clearInterval(pinger);
        clearInterval(rechecker);
        await ready;
        unsubscribeWake?.();
        await poller.stop();
        fanOut.clear();
        await Promise.allSettled([...admitting]);
        const gone = [...sockets].map((ws) => new Promise<void>((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once('close', () => r()))));
        for (const conn of [...live, ...replaying]) conn.ws.close(stream.closeCodes.shuttingDown.code, stream.closeCodes.shuttingDown.reason);
        live.clear();
        replaying.clear();
        const grace = setTimeout(() => {
          for (const ws of sockets) ws.terminate();
        }, SHUTDOWN_GRACE_MS);
        await Promise.all(gone);
        clearTimeout(grace);
        await new Promise<void>((r) => wss.close(() => r()));
      })();
      return closed;
    },
  };
}

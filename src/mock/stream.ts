/**
 * The stream half of the mock: `/v1/stream` on the same HTTP server as the REST front, driven by the
 * message examples of asyncapi.yaml. One article is pushed to every open connection at a steady pace,
 * each with a fresh ULID `id` and `received_at` (so clients that dedupe by id see new articles), `tickers`
 * only for max keys. Admission uses the service's own rules (src/stream `keyFromRequest`,
 * `admissionOutcome`): `api_key` query parameter (or `X-API-Key` header), 1008 with the contract's reason
 * for an invalid or inactive key, a tier without streaming, or a second connection of the same account
 * (each sandbox key is its own account); protocol pings and the slow-consumer bound as in `x-stream`.
 *
 * Resume and filter as the service: the mock keeps the last `historyLimit` articles it pushed (default
 * 10,000), so `after=<id>` replays what it pushed after that id (within the key's lookback window),
 * oldest first and paced by the client, then continues live; `tickers` (max keys) filters both; the
 * parameters are judged by the service's own rules (src/stream `streamParams`), after key and plan and
 * before the slot. An `after` older than the history replays the whole history (the mock forgets).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { monotonicFactory } from 'ulid';
import { WebSocketServer, type WebSocket } from 'ws';
import { stream as rules, streamAddress, type Article, type Tier } from '../contract/index.js';
import { authenticate, type AuthDeps } from '../auth/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { effectiveSince } from '../domain/lookback.js';
import { acceptUpgradeFor } from '../http/server.js';
import { admissionOutcome, keyFromRequest, matchesTickers, replayLowerBound, streamParams, type TickerFilter } from '../stream/index.js';

export interface MockStreamOptions {
  auth: AuthDeps;
  /** The articles to cycle through (asyncapi.yaml's examples); ids and times are replaced when pushed. */
  examples: Article[];
  /** Pace of the firehose: one article every `intervalMs`. */
  intervalMs: number;
  clock: () => number;
  /** How many pushed articles are kept for `after=` replays. Default MOCK_HISTORY. */
  historyLimit?: number;
  log?: (message: string) => void;
}

export interface MockStream {
  /** Open connections. */
  readonly size: number;
  /** Pushes the next article now (the timer does it every `intervalMs`). */
  pushNext(): Article;
  close(): Promise<void>;
}

interface Conn {
  ws: WebSocket;
  accountId: string;
  tier: Tier;
  withTickers: boolean;
  tickers: TickerFilter | undefined;
  /** Still replaying from the history: live pushes are not sent to it (the replay reaches them). */
  replaying: boolean;
  alive: boolean;
}

/** Default number of pushed articles the mock keeps for replays. */
export const MOCK_HISTORY = 10_000;
/** Articles per replay page. */
const REPLAY_PAGE = 200;

/**
 * The distinct example articles, each in its fullest form: the examples show one article as a max client
 * and as a pro client receives it, so keep per id the variant with `tickers`.
 */
export function exampleArticles(examples: Record<string, Article>): Article[] {
  const byId = new Map<string, Article>();
  for (const a of Object.values(examples)) {
    const seen = byId.get(a.id);
    if (!seen || (seen.tickers === undefined && a.tickers !== undefined)) byId.set(a.id, a);
  }
  return [...byId.values()];
}

export function attachMockStream(server: Server, opts: MockStreamOptions): MockStream {
  if (opts.examples.length === 0) throw new Error('the stream mock needs at least one example article');
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const conns = new Set<Conn>();
  const ulid = monotonicFactory();
  let next = 0;
  const historyLimit = opts.historyLimit ?? MOCK_HISTORY;
  /** The pushed articles, oldest first (ids increase), at most `historyLimit` plus a trimming slack. */
  const history: StoredArticle[] = [];
  /** Index of the first article in `history` with an id above `id`. */
  const firstAfter = (id: string): number => {
    let lo = 0;
    let hi = history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (history[mid]!.id > id) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const slowConsumer = (c: Conn): void => c.ws.close(rules.closeCodes.slowConsumer.code, rules.closeCodes.slowConsumer.reason);

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!acceptUpgradeFor(streamAddress, req, socket)) return;
    wss.handleUpgrade(req, socket, head, (ws) => void admit(ws, req));
  };
  server.on('upgrade', onUpgrade);

  /** The service's own admission rules (src/stream): key, then plan, then the account's single slot. */
  async function admit(ws: WebSocket, req: IncomingMessage): Promise<void> {
    // From the first moment: a protocol error of a client (e.g. an oversized frame) only ends that client.
    ws.on('error', () => ws.terminate());
    const key = keyFromRequest(req.url, req.headers);
    const auth = await authenticate(opts.auth, { ip: req.socket.remoteAddress ?? 'unknown', key, now: opts.clock(), allowBlockedTier: false });
    if (ws.readyState !== ws.OPEN) return; // the client left while it was being admitted
    const outcome = admissionOutcome(auth);
    if (!outcome.ok) return ws.close(outcome.close.code, outcome.close.reason);
    const { accountId, tier, withTickers } = outcome;
    // The connection parameters before the slot, as the service: a refused connection never holds it.
    const params = streamParams(req.url, withTickers);
    if (!params.ok) return ws.close(params.close.code, params.close.reason);
    // A connection whose closing handshake has begun no longer holds the account's slot.
    if ([...conns].filter((c) => c.accountId === accountId && c.ws.readyState === c.ws.OPEN).length >= rules.connectionsPerAccount) {
      return ws.close(rules.closeCodes.secondConnection.code, rules.closeCodes.secondConnection.reason);
    }
    const after = params.params.after;
    const conn: Conn = { ws, accountId, tier, withTickers, tickers: params.params.tickers, replaying: after !== undefined, alive: true };
    conns.add(conn);
    if (after !== undefined) void replay(conn, replayLowerBound(after, effectiveSince(tier, opts.clock(), undefined)));
    ws.on('pong', () => (conn.alive = true));
    ws.on('close', () => conns.delete(conn));
    ws.on('error', () => conns.delete(conn));
    opts.log?.(`stream: ${tier} client connected (${conns.size} open)`);
  }

  /**
   * Sends the history after `pos`, page by page, paced by the client (next page once its send buffer is
   * at most half the bound), then hands the connection to the live pushes: the hand-over is synchronous
   * with the last history read, so nothing pushed meanwhile is missed or sent twice.
   */
  async function replay(conn: Conn, pos: string): Promise<void> {
    for (;;) {
      if (!conns.has(conn) || conn.ws.readyState !== conn.ws.OPEN) return;
      const from = firstAfter(pos);
      if (from >= history.length) {
        conn.replaying = false;
        return;
      }
      const page = history.slice(from, from + REPLAY_PAGE);
      pos = page[page.length - 1]!.id;
      if (conn.ws.bufferedAmount > rules.maxBufferedBytes) return slowConsumer(conn);
      for (const a of page) if (matchesTickers(a, conn.tickers)) conn.ws.send(JSON.stringify(presentArticle(a, conn.withTickers)));
      await new Promise<void>((r) => setImmediate(r));
      while (conns.has(conn) && conn.ws.readyState === conn.ws.OPEN && conn.ws.bufferedAmount > rules.maxBufferedBytes / 2) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  function pushNext(): Article {
    const example = opts.examples[next++ % opts.examples.length]!;
    const now = opts.clock();
    // Keep the example's delay between publication and reception.
    const lag = example.published_at === null ? 0 : Math.max(0, Date.parse(example.received_at) - Date.parse(example.published_at));
    const article: StoredArticle = {
      ...example,
      id: ulid(now),
      received_at: new Date(now).toISOString(),
      published_at: example.published_at === null ? null : new Date(now - lag).toISOString().replace('.000Z', 'Z'),
      tickers: example.tickers ?? [],
    };
    history.push(article);
    if (history.length >= historyLimit + 1000) history.splice(0, history.length - historyLimit);
    let forMax: string | undefined;
    let forOthers: string | undefined;
    for (const c of conns) {
      if (c.ws.readyState !== c.ws.OPEN) continue;
      if (!matchesTickers(article, c.tickers)) continue;
      // A replaying connection is owed this article too: the same slow-consumer rule, the replay sends it.
      if (c.ws.bufferedAmount > rules.maxBufferedBytes) {
        slowConsumer(c);
        continue;
      }
      if (c.replaying) continue;
      c.ws.send(c.withTickers ? (forMax ??= JSON.stringify(presentArticle(article, true))) : (forOthers ??= JSON.stringify(presentArticle(article, false))));
    }
    return presentArticle(article, true);
  }

  const pushTimer = setInterval(pushNext, opts.intervalMs);
  const pingTimer = setInterval(() => {
    for (const c of conns) {
      if (c.ws.readyState !== c.ws.OPEN) {
        conns.delete(c);
        continue;
      }
      if (!c.alive) {
        c.ws.terminate();
        conns.delete(c);
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }, rules.pingIntervalSeconds * 1000);
  pushTimer.unref();
  pingTimer.unref();

  return {
    get size() {
      return conns.size;
    },
    pushNext,
    async close() {
      clearInterval(pushTimer);
      clearInterval(pingTimer);
      server.off('upgrade', onUpgrade);
      for (const c of conns) c.ws.close(rules.closeCodes.shuttingDown.code, rules.closeCodes.shuttingDown.reason);
      const deadline = Date.now() + 1000;
      while ([...wss.clients].some((ws) => ws.readyState !== ws.CLOSED) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/**
 * The stream half of the mock: `/v1/stream` on the same HTTP server as the REST front, driven by the
 * message examples of asyncapi.yaml. One article is pushed to every open connection at a steady pace,
 * each with a fresh ULID `id` and `received_at` (so clients that dedupe by id see new articles), `tickers`
 * only for max keys. Admission uses the service's own rules (src/stream `keyFromRequest`,
 * `admissionOutcome`): `api_key` query parameter (or `X-API-Key` header), 1008 with the contract's reason
 * for an invalid or inactive key, a tier without streaming, or a second connection of the same account
 * (each sandbox key is its own account); protocol pings and the slow-consumer bound as in `x-stream`.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { monotonicFactory } from 'ulid';
import { WebSocketServer, type WebSocket } from 'ws';
import { stream as rules, streamAddress, type Article, type Tier } from '../contract/index.js';
import { authenticate, type AuthDeps } from '../auth/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { acceptUpgradeFor } from '../http/server.js';
import { admissionOutcome, keyFromRequest } from '../stream/index.js';

export interface MockStreamOptions {
  auth: AuthDeps;
  /** The articles to cycle through (asyncapi.yaml's examples); ids and times are replaced when pushed. */
  examples: Article[];
  /** Pace of the firehose: one article every `intervalMs`. */
  intervalMs: number;
  clock: () => number;
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
  alive: boolean;
}

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
    // A connection whose closing handshake has begun no longer holds the account's slot.
    if ([...conns].filter((c) => c.accountId === accountId && c.ws.readyState === c.ws.OPEN).length >= rules.connectionsPerAccount) {
      return ws.close(rules.closeCodes.secondConnection.code, rules.closeCodes.secondConnection.reason);
    }
    const conn: Conn = { ws, accountId, tier, withTickers, alive: true };
    conns.add(conn);
    ws.on('pong', () => (conn.alive = true));
    ws.on('close', () => conns.delete(conn));
    ws.on('error', () => conns.delete(conn));
    opts.log?.(`stream: ${tier} client connected (${conns.size} open)`);
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
    const forMax = JSON.stringify(presentArticle(article, true));
    const forOthers = JSON.stringify(presentArticle(article, false));
    for (const c of conns) {
      if (c.ws.readyState !== c.ws.OPEN) continue;
      if (c.ws.bufferedAmount > rules.maxBufferedBytes) {
        c.ws.close(rules.closeCodes.slowConsumer.code, rules.closeCodes.slowConsumer.reason);
        continue;
      }
      c.ws.send(c.withTickers ? forMax : forOthers);
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

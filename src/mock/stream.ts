/**
 * The mock's `/v1/stream`: the service's own WebSocket adapter (src/stream `attachStream`) over an in-memory feed,
 * so admission, close codes, resume, filters, pacing, keep-alive and shutdown are the service's by construction.
 * The feed is the mock's: asyncapi.yaml's examples, one every `intervalMs` with a fresh ULID and `received_at`;
 * the last `historyLimit` kept for `after=` (an older `after` replays all of them).
 */
import { lineLog } from '../domain/log.js';
import type { Server } from 'node:http';
import { monotonicFactory } from 'ulid';
import { stream as rules, type Article } from '../contract/index.js';
import type { AuthDeps } from '../auth/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { MemoryFeed } from '../delivery/index.js';
import { MemoryStreamSlots } from '../state/stream-slots.js';
import { attachStream } from '../stream/index.js';

export interface MockStreamOptions {
  /** The sandbox accounts, the open IP guard and the sandbox key prefix. */
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
  readonly size: number;
  /** Pushes the next article now (the timer does it every `intervalMs`); returns it as a max client receives it. */
  pushNext(): Article;
  close(): Promise<void>;
}

const MOCK_HISTORY = 10_000;
/** The feed reader's safety-net poll; a push wakes it at once. */
const MOCK_FEED_POLL_MS = 1000;

/** The distinct example articles, each in its fullest form (per id, the max-client variant with `tickers`). */
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
  const feed = new MemoryFeed(opts.historyLimit ?? MOCK_HISTORY);
  const stream = attachStream(server, {
    accounts: opts.auth.accounts,
    articles: feed,
    ipGuard: opts.auth.ipGuard,
    livePrefix: opts.auth.livePrefix,
    clock: opts.clock,
    trustProxy: false,
    slots: new MemoryStreamSlots(),
    recheckMs: rules.recheckSeconds * 1000,
    feedWake: (wake) => feed.subscribe(wake),
    feedPollMs: MOCK_FEED_POLL_MS,
    ...(opts.log ? { log: lineLog(opts.log) } : {}),
  });
  const ulid = monotonicFactory();
  let next = 0;

  function pushNext(): Article {
    const example = opts.examples[next++ % opts.examples.length]!;
    const now = opts.clock();
    // Keep the example's delay between publication and reception.
    const lag =
      example.published_at === null
        ? 0
        : Math.max(0, Date.parse(example.received_at) - Date.parse(example.published_at));
    const article: StoredArticle = {
      ...example,
      id: ulid(now),
      received_at: new Date(now).toISOString(),
      published_at: example.published_at === null ? null : new Date(now - lag).toISOString().replace('.000Z', 'Z'),
      tickers: example.tickers ?? [],
    };
    feed.append(article);
    return presentArticle(article, true);
  }

  const pushTimer = setInterval(pushNext, opts.intervalMs);
  pushTimer.unref();

  return {
    get size() {
      return stream.connections();
    },
    pushNext,
    async close() {
      clearInterval(pushTimer);
      await stream.close();
    },
  };
}

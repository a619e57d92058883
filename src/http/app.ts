/** The REST app, built by a function so tests run it in-process; admission and validation are middleware. */
import { parseRfc3339 } from '../domain/time.js';
import express from 'express';
import { limits, plans, type SearchResults } from '../contract/index.js';
import { cachedLookup, type AuthDeps } from '../auth/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { effectiveSince } from '../domain/lookback.js';
import { usageOf } from '../domain/tiers.js';
import type { ArticleStore, Freshness, ListQuery, StoreChanges, WakeSubscription } from '../store/ports/index.js';
import type { SearchOptions } from '../indexing/index.js';
import type { RateLimiter } from '../state/ports.js';
import { EmbeddingUnavailableError } from '../search/index.js';
import { createOperationChain, OPERATION_PATHS, type Locals, type OperationId } from './admission.js';
import { contractApp, contractFallbacks, JSON_TYPE, sendJson, sendProblem } from './problem.js';
import { FirstPageCache, pageOf, type Page } from './list-cache.js';
import { linkHeader, listNext, listParams, relevanceOf, searchNext } from './paging.js';
import { mountStatus, STATUS_PATHS, type StatusSource } from './status.js';

export interface ArchiveSearch {
  /** Results `offset` to `offset + limit`, most relevant first; EmbeddingUnavailableError if the embedder fails. */
  search(query: string, limit: number, options?: SearchOptions): Promise<StoredArticle[]>;
}

export interface AppDeps extends AuthDeps {
  articles: ArticleStore;
  /** The store's change signal: the key and first-page caches serve an entry only under its read generation. */
  changes: Pick<StoreChanges, 'freshness'>;
  search: ArchiveSearch;
  rateLimiter: RateLimiter;
  clock: () => number;
  trustProxy: boolean | number | string;
  validateResponses: boolean;
  /** Operations (src/ops): a first middleware (reads `operationId`, `caller` at response end) and the 429 count. */
  observe?: { middleware: express.RequestHandler; rateLimited(operationId: OperationId): void };
  /** Commit hints (directory watch, LISTEN/NOTIFY): the key and first-page caches look at the store again. */
  feedWake?: WakeSubscription;
  /** When the caches must look again (default: `changes.freshness`). */
  freshness?: Freshness;
  /** The public status report (`/v1/status`, `/status`), when the instance runs a status board. */
  status?: StatusSource;
}

/** A NewsList page: the cached or fresh head of the body, then `next` (and its `Link` header). */
function sendPage(res: express.Response, page: Page, next: string | null): void {
  const body = Buffer.concat([page.head, Buffer.from(`,"next":${JSON.stringify(next)}}`)]);
  const check = res.locals.checkResponse as ((status: number, type: string, body: unknown) => void) | undefined;
  check?.(200, JSON_TYPE, JSON.parse(body.toString('utf8')));
  if (next !== null) res.setHeader('Link', linkHeader(next));
  res.statusCode = 200;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

async function listNews(
  deps: AppDeps,
  firstPages: FirstPageCache,
  res: express.Response<unknown, Locals<'listNews'>>,
): Promise<void> {
  const { caller, params: checked } = res.locals;
  const now = deps.clock();
  const params = listParams(checked);
  const limit = checked.limit;
  const since = params.since === undefined ? undefined : parseRfc3339(params.since);
  const urgency = checked.urgency;
  const withTickers = plans[caller.tier].tickers;
  // The lookback window bounds every page: the store takes the later of it and `after`.
  const query: ListQuery = {
    afterMs: effectiveSince(caller.tier, now, since),
    limit,
    ...(urgency ? { urgency } : {}),
    ...(params.tickers ? { tickers: params.tickers, minRelevance: relevanceOf(checked) } : {}),
    ...(params.after !== undefined ? { afterId: params.after, ascending: true } : {}),
    ...(params.before !== undefined ? { beforeId: params.before } : {}),
  };
  const windowStart = effectiveSince(caller.tier, now, undefined);
  // Hot path: the store serialises each article (NewsList is `count`, those objects and `next`).
  const load = () => deps.articles.listJson(query, withTickers);
  const firstPage = query.afterMs === windowStart && !query.afterId && !query.beforeId && !query.tickers;
  if (!firstPage) {
    const page = pageOf(await load());
    return sendPage(res, page, listNext(params, limit, page));
  }
  // The window's first page (no cursor, no filter but urgency): usually cached.
  const cached = firstPages.get({ withTickers, lookbackMs: now - windowStart, urgency, limit }, windowStart, load);
  const page = cached instanceof Promise ? await cached : cached;
  sendPage(res, page, listNext(params, limit, page));
}

export function createApp(deps: AppDeps): express.Express {
  const app = contractApp(deps.observe?.middleware);
  app.set('trust proxy', deps.trustProxy);

  // One generation for both caches: the accounts and the articles are ports of one store.
  const freshness = deps.freshness ?? deps.changes.freshness(deps.feedWake ? { wake: deps.feedWake } : {});
  const generation = () => freshness.generation();
  const auth: AuthDeps = { ...deps, keyLookup: cachedLookup(deps.accounts, generation) };
  const firstPages = new FirstPageCache(generation);

  const route = createOperationChain({
    auth,
    rateLimiter: deps.rateLimiter,
    clock: deps.clock,
    validateResponses: deps.validateResponses,
    ...(deps.observe ? { onRateLimited: deps.observe.rateLimited } : {}),
  });

  /** The route of `op`: its admission chain, then `handler` with the caller and the checked, typed parameters. */
  const on = <Op extends OperationId>(op: Op, handler: (res: express.Response<unknown, Locals<Op>>) => Promise<void>) =>
    app.get<express.Request['params'], unknown, unknown, express.Request['query'], Locals<Op>>(
      OPERATION_PATHS[op],
      ...route(op),
      (_req, res) => handler(res),
    );

  on('listNews', (res) => listNews(deps, firstPages, res));

  on('searchNews', async (res) => {
    const { q, limit, offset, tickers } = res.locals.params;
    const minRelevance = tickers ? relevanceOf(res.locals.params) : undefined;
    let rows: StoredArticle[];
    try {
      rows = await deps.search.search(q, limit, { offset, ...(tickers ? { tickers, minRelevance } : {}) });
    } catch (err) {
      if (err instanceof EmbeddingUnavailableError) {
        res.set('Retry-After', String(limits.unavailableRetryAfterSeconds));
        return sendProblem(res, 'embeddingUnavailable');
      }
      throw err;
    }
    const next = searchNext(
      { q, offset, ...(tickers ? { tickers, min_relevance: String(minRelevance) } : {}) },
      limit,
      rows.length,
    );
    const body: SearchResults = {
      count: rows.length,
      query: q,
      articles: rows.map((a) => presentArticle(a, true) as SearchResults['articles'][number]),
      next,
    };
    if (next !== null) res.setHeader('Link', linkHeader(next));
    sendJson(res, 200, body);
  });

  on('getAccountUsage', async (res) => {
    const { caller } = res.locals;
    const account = await deps.accounts.getAccount(caller.accountId);
    sendJson(res, 200, usageOf(account!, deps.clock()));
  });

  if (deps.status) mountStatus(app, deps.status, { validateResponses: deps.validateResponses });
  const known = [...Object.values(OPERATION_PATHS), ...(deps.status ? Object.values(STATUS_PATHS) : [])];
  app.use(...contractFallbacks(known, ''));

  return app;
}

/**
 * The REST app, built by a function so tests run it in-process. Handlers are thin: admission (auth,
 * tier access, rate limit) and validation happen in middleware; handlers call the stores and map.
 */
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
  /**
   * Most relevant first: the ranked results `offset` to `offset + limit` (of those about one of
   * `tickers`, when given). Throws EmbeddingUnavailableError when the embedder fails.
   */
  search(query: string, limit: number, options?: SearchOptions): Promise<StoredArticle[]>;
}

export interface AppDeps extends AuthDeps {
  articles: ArticleStore;
  /**
   * The change signal of the store `accounts` and `articles` belong to (src/store/ports/changes.ts):
   * the key and first-page caches serve an entry only under the generation it was read in.
   */
  changes: Pick<StoreChanges, 'freshness'>;
  search: ArchiveSearch;
  rateLimiter: RateLimiter;
  clock: () => number;
  trustProxy: boolean | number | string;
  validateResponses: boolean;
  /** Operations (src/ops): a middleware mounted first (request id, request log line, metrics; it reads `res.locals.operationId` / `caller` when the response ends) and the rate-limit refusal count. */
  observe?: { middleware: express.RequestHandler; rateLimited(operationId: OperationId): void };
  /**
   * "Something was committed" hints (src/server: the data directory watch, PostgreSQL LISTEN/NOTIFY):
   * the caches of keys and first pages look at the store again at the next request.
   */
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

/** listNews: a page of the window, the first page of the window usually from the cache. */
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
  // The lookback window bounds every page: an `after` older than it reads as its start (the store
  // takes the larger of the two lower bounds).
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
  // The first page of the window (no `since`, or one older than the window; no cursor, no filter
  // but urgency): usually cached.
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

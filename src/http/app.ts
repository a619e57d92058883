/**
 * The REST app, built by a function so tests run it in-process. Handlers are thin: admission (auth,
 * tier access, rate limit) and validation happen in middleware; handlers call the stores and map.
 */
import { parseRfc3339 } from '../domain/time.js';
import express from 'express';
import { limits, plans, type SearchResults, type Urgency } from '../contract/index.js';
import { cachedLookup, type AuthDeps } from '../auth/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { effectiveSince } from '../domain/lookback.js';
import { usageOf } from '../domain/tiers.js';
import type { ArticleStore } from '../store/ports.js';
import type { RateLimiter } from '../state/memory.js';
import { EmbeddingUnavailableError } from '../search/index.js';
import { createOperationChain, LIMIT_DEFAULT, OPERATION_PATHS, type Locals, type OperationId } from './admission.js';
import { contractApp, contractFallbacks, JSON_TYPE, sendJson, sendJsonText, sendProblem } from './problem.js';
import { validationErrorHandler } from './validation.js';
import { FirstPageCache, type Page } from './list-cache.js';
import { freshnessOf, type Freshness, type WakeSubscription } from './store-freshness.js';

export interface ArchiveSearch {
  /** Most relevant first. Throws EmbeddingUnavailableError when the embedder fails. */
  search(query: string, limit: number): Promise<StoredArticle[]>;
}

export interface AppDeps extends AuthDeps {
  articles: ArticleStore;
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
  /** When the caches must look again (default: from the store, see store-freshness.ts). */
  freshness?: Freshness;
}

const OPERATION_PATHS_LIST = Object.values(OPERATION_PATHS);

function freshnessSource(store: object, wake: WakeSubscription | undefined): () => number {
  const f = freshnessOf(store, wake ? { wake } : {});
  return () => f.generation();
}

/** sendJsonText for a cached page: the body is already encoded. */
function sendPage(res: express.Response, page: Page): void {
  const check = res.locals.checkResponse as ((status: number, type: string, body: unknown) => void) | undefined;
  check?.(200, JSON_TYPE, JSON.parse(page.body.toString('utf8')));
  res.statusCode = 200;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', page.body.length);
  res.end(page.body);
}

export function createApp(deps: AppDeps): express.Express {
  const app = contractApp(deps.observe?.middleware);
  app.set('trust proxy', deps.trustProxy);

  const freshness = deps.freshness ?? freshnessOf(deps.articles, deps.feedWake ? { wake: deps.feedWake } : {});
  const generation = () => freshness.generation();
  const accountsGeneration = (deps.accounts as object) === deps.articles || deps.freshness ? generation : freshnessSource(deps.accounts, deps.feedWake);
  const auth: AuthDeps = { ...deps, keyLookup: cachedLookup(deps.accounts, accountsGeneration) };
  const firstPages = new FirstPageCache(generation);

  const route = createOperationChain({ auth, rateLimiter: deps.rateLimiter, clock: deps.clock, validateResponses: deps.validateResponses, ...(deps.observe ? { onRateLimited: deps.observe.rateLimited } : {}) });

  app.get(OPERATION_PATHS.listNews, ...route('listNews'), async (req, res) => {
    const { caller } = res.locals as Locals;
    const now = deps.clock();
    const limit = Number(req.query.limit ?? LIMIT_DEFAULT.listNews);
    const since = typeof req.query.since === 'string' ? parseRfc3339(req.query.since) : undefined;
    const urgency = req.query.urgency as Urgency | undefined;
    const withTickers = plans[caller.tier].tickers;
    const query = { afterMs: effectiveSince(caller.tier, now, since), limit, ...(urgency ? { urgency } : {}) };
    const windowStart = effectiveSince(caller.tier, now, undefined);
    // Hot path: the store serialises each article (NewsList is just `count` and those objects).
    const load = () => deps.articles.listJson(query, withTickers);
    if (query.afterMs !== windowStart) {
      const articles = await load();
      return sendJsonText(res, 200, `{"count":${articles.length},"articles":[${articles.join(',')}]}`);
    }
    // The first page of the window (no `since`, or one older than the window): usually cached.
    const cached = firstPages.get({ withTickers, lookbackMs: now - windowStart, urgency, limit }, windowStart, load);
    sendPage(res, cached instanceof Promise ? await cached : cached);
  });

  app.get(OPERATION_PATHS.searchNews, ...route('searchNews'), async (req, res) => {
    const q = String(req.query.q);
    const limit = Number(req.query.limit ?? LIMIT_DEFAULT.searchNews);
    let rows: StoredArticle[];
    try {
      rows = await deps.search.search(q, limit);
    } catch (err) {
      if (err instanceof EmbeddingUnavailableError) {
        res.set('Retry-After', String(limits.unavailableRetryAfterSeconds));
        return sendProblem(res, 'embeddingUnavailable');
      }
      throw err;
    }
    const body: SearchResults = { count: rows.length, query: q, articles: rows.map((a) => presentArticle(a, true) as SearchResults['articles'][number]) };
    sendJson(res, 200, body);
  });

  app.get(OPERATION_PATHS.getAccountUsage, ...route('getAccountUsage'), async (_req, res) => {
    const { caller } = res.locals as Locals;
    const account = await deps.accounts.getAccount(caller.accountId);
    sendJson(res, 200, usageOf(account!, deps.clock()));
  });

  app.use(validationErrorHandler((req) => (req.res?.locals as Partial<Locals> | undefined)?.operationId));

  app.use(...contractFallbacks(OPERATION_PATHS_LIST, ''));

  return app;
}

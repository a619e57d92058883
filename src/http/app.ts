/**
 * The REST app, built by a function so tests run it in-process. Handlers are thin: admission (auth,
 * tier access, rate limit) and validation happen in middleware; handlers call the stores and map.
 */
import { parseRfc3339 } from '../domain/time.js';
import express from 'express';
import { limits, plans, type SearchResults, type Urgency } from '../contract/index.js';
import type { AuthDeps } from '../auth/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { effectiveSince } from '../domain/lookback.js';
import { usageOf } from '../domain/tiers.js';
import type { ArticleStore } from '../store/ports.js';
import type { RateLimiter } from '../state/memory.js';
import { EmbeddingUnavailableError } from '../search/index.js';
import { createOperationChain, LIMIT_DEFAULT, OPERATION_PATHS, type Locals, type OperationId } from './admission.js';
import { contractApp, contractFallbacks, sendJson, sendJsonText, sendProblem } from './problem.js';
import { validationErrorHandler } from './validation.js';

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
}

const OPERATION_PATHS_LIST = Object.values(OPERATION_PATHS);

export function createApp(deps: AppDeps): express.Express {
  const app = contractApp(deps.observe?.middleware);
  app.set('trust proxy', deps.trustProxy);

  const route = createOperationChain({ auth: deps, rateLimiter: deps.rateLimiter, clock: deps.clock, validateResponses: deps.validateResponses, ...(deps.observe ? { onRateLimited: deps.observe.rateLimited } : {}) });

  app.get(OPERATION_PATHS.listNews, ...route('listNews'), async (req, res) => {
    const { caller } = res.locals as Locals;
    const now = deps.clock();
    const limit = Number(req.query.limit ?? LIMIT_DEFAULT.listNews);
    const since = typeof req.query.since === 'string' ? parseRfc3339(req.query.since) : undefined;
    const urgency = req.query.urgency as Urgency | undefined;
    const query = { afterMs: effectiveSince(caller.tier, now, since), limit, ...(urgency ? { urgency } : {}) };
    // Hot path: SQLite serialises each article (NewsList is just `count` and those objects).
    const articles = await deps.articles.listJson(query, plans[caller.tier].tickers);
    sendJsonText(res, 200, `{"count":${articles.length},"articles":[${articles.join(',')}]}`);
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

/**
 * The REST app, built by a function so tests run it in-process. Handlers are thin: admission (auth,
 * tier access, rate limit) and validation happen in middleware; handlers call the stores and map.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { limits, operationParameters, plans, type NewsList, type SearchResults, type Urgency } from '../contract/index.js';
import { authenticate, type AuthDeps, type Caller } from '../auth/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { effectiveSince } from '../domain/lookback.js';
import { usageOf } from '../domain/tiers.js';
import type { ArticleStore } from '../store/ports.js';
import type { RateLimiter } from '../state/memory.js';
import { EmbeddingUnavailableError } from '../search/index.js';
import { contractFallbacks, sendJson, sendProblem } from './problem.js';
import { openapiValidator, parseQuery, rejectRepeated, validationErrorHandler } from './validation.js';
import { createResponseCheck } from './response-check.js';

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
}

type OperationId = 'listNews' | 'searchNews' | 'getAccountUsage';

interface Access {
  /** The usage endpoint answers `free` keys too. */
  allowBlockedTier: boolean;
  counted: boolean;
  requires?: 'search';
}

const ACCESS: Record<OperationId, Access> = {
  listNews: { allowBlockedTier: false, counted: true },
  searchNews: { allowBlockedTier: false, counted: true, requires: 'search' },
  getAccountUsage: { allowBlockedTier: true, counted: false },
};

interface Locals {
  operationId: OperationId;
  caller: Caller;
}

function defaultOf(operationId: OperationId, name: string): number {
  return operationParameters(operationId).find((p) => p.name === name)!.schema.default;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy);
  app.set('query parser', parseQuery);
  app.set('etag', false);

  const validator = openapiValidator();
  const checkResponse = deps.validateResponses ? createResponseCheck() : undefined;

  /** Admission: IP guard and key, tier access, then the rate limit (only admitted requests count). */
  const admit = (operationId: OperationId) => async (req: Request, res: Response, next: NextFunction) => {
    const now = deps.clock();
    const access = ACCESS[operationId];
    res.locals.operationId = operationId;
    if (checkResponse) res.locals.checkResponse = (status: number, type: string, body: unknown) => checkResponse(operationId, status, type, body);
    const key = req.get('x-api-key');
    const result = await authenticate(deps, { ip: req.ip ?? 'unknown', key, now, allowBlockedTier: access.allowBlockedTier });
    if (!result.ok) {
      if (result.retryAfterSeconds !== undefined) res.set('Retry-After', String(result.retryAfterSeconds));
      return sendProblem(res, result.problem);
    }
    const plan = plans[result.caller.tier];
    if (access.requires === 'search' && !plan.search) return sendProblem(res, 'maxPlanOnly');
    res.locals.caller = result.caller;
    if (access.counted) {
      const d = await deps.rateLimiter.hit(result.caller.keyId, plan.rateLimit, limits.rateWindowMs, now);
      res.set({
        'X-RateLimit-Limit': String(d.limit),
        'X-RateLimit-Remaining': String(d.remaining),
        'X-RateLimit-Reset': String(Math.ceil(d.resetAt / 1000)),
      });
      if (!d.admitted) {
        res.set('Retry-After', String(d.retryAfterSeconds));
        return sendProblem(res, 'rateLimitExceeded');
      }
    }
    next();
  };

  const route = (operationId: OperationId) => [admit(operationId), rejectRepeated(operationId), ...validator];

  app.get('/v1/news', ...route('listNews'), async (req, res) => {
    const { caller } = res.locals as Locals;
    const now = deps.clock();
    const limit = Number(req.query.limit ?? defaultOf('listNews', 'limit'));
    const since = typeof req.query.since === 'string' ? Date.parse(req.query.since) : undefined;
    const urgency = req.query.urgency as Urgency | undefined;
    const rows = await deps.articles.list({ afterMs: effectiveSince(caller.tier, now, since), limit, ...(urgency ? { urgency } : {}) });
    const withTickers = plans[caller.tier].tickers;
    const body: NewsList = { count: rows.length, articles: rows.map((a) => presentArticle(a, withTickers)) };
    sendJson(res, 200, body);
  });

  app.get('/v1/news/search', ...route('searchNews'), async (req, res) => {
    const q = String(req.query.q);
    const limit = Number(req.query.limit ?? defaultOf('searchNews', 'limit'));
    let rows: StoredArticle[];
    try {
      rows = await deps.search.search(q, limit);
    } catch (err) {
      if (err instanceof EmbeddingUnavailableError) return sendProblem(res, 'embeddingUnavailable');
      throw err;
    }
    const body: SearchResults = { count: rows.length, query: q, articles: rows.map((a) => presentArticle(a, true) as SearchResults['articles'][number]) };
    sendJson(res, 200, body);
  });

  app.get('/v1/account/usage', ...route('getAccountUsage'), async (_req, res) => {
    const { caller } = res.locals as Locals;
    const account = await deps.accounts.getAccount(caller.accountId);
    sendJson(res, 200, usageOf(account!, deps.clock()));
  });

  app.use(validationErrorHandler((req) => (req.res?.locals as Partial<Locals> | undefined)?.operationId));

  app.use(...contractFallbacks(['/v1/news', '/v1/news/search', '/v1/account/usage'], ''));

  return app;
}

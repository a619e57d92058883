/**
 * The mock's REST front, in src/http/app.ts's order: authentication (the service's `authenticate` on sandbox
 * keys), tier access, rate-limit headers, validation (src/http/parameters.ts). Prism's examples are then shaped
 * for the key's tier and query as the service would (src/http/paging.ts). `Prefer` reaches Prism's documented
 * responses; one the contract cannot satisfy is a `400` after admission (src/mock/prefer.ts).
 */
import { parseRfc3339 } from '../domain/time.js';
import express, { type Request, type Response } from 'express';
import { Agent, request as httpRequest } from 'node:http';
import {
  limits,
  minRelevanceDefault,
  plans,
  problems,
  type Article,
  type NewsList,
  type SearchResults,
  type Tier,
} from '../contract/index.js';
import type { AuthDeps } from '../auth/index.js';
import { isAbout, presentArticle, type StoredArticle } from '../domain/articles.js';
import { usageOf } from '../domain/tiers.js';
import type { RateLimiter } from '../state/ports.js';
import {
  contractApp,
  contractFallbacks,
  JSON_TYPE,
  PROBLEM_TYPE,
  sendGenericProblem,
  sendJson,
} from '../http/problem.js';
import { createOperationChain, OPERATION_PATHS, type Locals, type OperationId } from '../http/admission.js';
import { RATE_LIMIT_HEADERS, rateLimitHeaders } from '../http/ratelimit-headers.js';
import { queryOf, readQuery } from '../http/parameters.js';
import { linkHeader, listNext, listParams, relevanceOf, searchNext, tickerList } from '../http/paging.js';
import type { SandboxAccounts } from './sandbox.js';
import { refuseUnservablePrefer } from './prefer.js';
import { mountMockStatus } from './status.js';
import { STATUS_PATHS } from '../http/status.js';

export interface MockRestDeps {
  prismUrl: string;
  accounts: SandboxAccounts;
  auth: AuthDeps;
  rateLimiter: RateLimiter;
  clock: () => number;
  /** Check every response against the contract (tests): a violation becomes a 500. */
  validateResponses?: boolean;
}

interface Upstream {
  status: number;
  contentType: string;
  body: string;
}

/** Rebuilds the query string for Prism from the raw one, each pair encoded as Prism reads it. */
function upstreamQuery(rawUrl: string): string {
  const parsed = readQuery(queryOf(rawUrl));
  const parts: string[] = [];
  for (const [k, v] of Object.entries(parsed)) {
    for (const value of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(value)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** The articles of a list example, as the real list endpoint would return them for this request. */
function shapeList(body: NewsList, tier: Tier, checked: Record<string, unknown>): NewsList {
  const params = listParams(checked);
  const limit = checked.limit as number;
  const since = params.since === undefined ? undefined : parseRfc3339(params.since);
  const tickers = params.tickers ? new Set(params.tickers) : undefined;
  const minRelevance = relevanceOf(checked) ?? minRelevanceDefault;
  const withTickers = plans[tier].tickers;
  const ascending = params.after !== undefined;
  const articles = body.articles
    .filter((a) => params.urgency === undefined || a.urgency === params.urgency)
    .filter((a) => since === undefined || Date.parse(a.received_at) > since)
    .filter((a) => params.after === undefined || a.id > params.after)
    .filter((a) => params.before === undefined || a.id < params.before)
    .filter((a) => tickers === undefined || isAbout(asStored(a), tickers, minRelevance))
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) * (ascending ? -1 : 1))
    .slice(0, limit)
    .map((a) => presentArticle(asStored(a), withTickers));
  const next = listNext(params, limit, { count: articles.length, lastId: articles[articles.length - 1]?.id });
  return { count: articles.length, articles, next };
}

function shapeSearch(body: SearchResults, query: Record<string, unknown>): SearchResults {
  const limit = query.limit as number;
  const offset = query.offset as number;
  const tickers = tickerList(query.tickers);
  const wanted = tickers ? new Set(tickers) : undefined;
  const minRelevance = relevanceOf(query) ?? minRelevanceDefault;
  const articles = body.articles
    .filter((a) => wanted === undefined || isAbout(asStored(a), wanted, minRelevance))
    .slice(offset, offset + limit)
    .map((a) => presentArticle(asStored(a), true) as SearchResults['articles'][number]);
  const q = query.q as string;
  const next = searchNext(
    { q, offset, ...(tickers ? { tickers, min_relevance: String(minRelevance) } : {}) },
    limit,
    articles.length,
  );
  return { count: articles.length, query: q, articles, next };
}

function sendPage(res: Response, body: NewsList | SearchResults): void {
  if (body.next) res.setHeader('Link', linkHeader(body.next));
  sendJson(res, 200, body);
}

/** Max keys always see `tickers`: an example article without it had none detected. */
function asStored(a: Article): StoredArticle {
  return { ...a, tickers: a.tickers ?? [] };
}

/** The request passed to Prism as the mock received it (its key and `Prefer`), on a kept-alive agent. */
function forward(prismUrl: string, agent: Agent, req: Request, key: string): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'X-API-Key': key };
    const prefer = req.get('prefer');
    if (prefer !== undefined) headers.Prefer = prefer;
    const up = httpRequest(
      `${prismUrl}${req.path}${upstreamQuery(req.originalUrl)}`,
      { method: 'GET', headers, agent },
      (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () =>
          resolve({ status: r.statusCode ?? 502, contentType: String(r.headers['content-type'] ?? ''), body }),
        );
        r.on('error', reject);
      },
    );
    up.on('error', reject);
    up.end();
  });
}

/** A `429` chosen with `Prefer`: the rate-limit headers and `Retry-After` the service would send for the key's plan. */
function setRateLimited(res: Response, tier: Tier, now: number): void {
  const limit = plans[tier].rateLimit;
  const retryAfter = Math.max(1, Math.ceil(limits.rateWindowMs / 1000 / Math.max(1, limit)));
  res.set({
    ...rateLimitHeaders(
      tier,
      { limit, remaining: 0, resetAt: now + retryAfter * 1000 },
      limits.rateWindowMs / 1000,
      now,
      retryAfter,
    ),
    'Retry-After': String(retryAfter),
  });
}

export function createMockApp(deps: MockRestDeps): { app: express.Express; close(): void } {
  const app = contractApp();

  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  // Admission as in the service; the mock's rate limiter admits every request.
  const route = createOperationChain({
    auth: deps.auth,
    rateLimiter: deps.rateLimiter,
    clock: deps.clock,
    validateResponses: deps.validateResponses ?? false,
  });

  const handler = (operationId: OperationId) => async (req: Request, res: Response) => {
    const { caller, params } = res.locals as Locals;
    if (refuseUnservablePrefer(operationId, req, res)) return;
    let up: Upstream;
    try {
      up = await forward(deps.prismUrl, agent, req, req.get('x-api-key') ?? '');
    } catch (err) {
      res.locals.checkResponse = undefined;
      return sendGenericProblem(
        res,
        502,
        'Bad Gateway',
        `The mock's Prism process did not answer: ${(err as Error).message}`,
      );
    }
    let parsed: any;
    try {
      parsed = up.body ? JSON.parse(up.body) : undefined;
    } catch {
      res.locals.checkResponse = undefined;
      return sendGenericProblem(res, 502, 'Bad Gateway', `Prism answered ${up.status} with a body that is not JSON`);
    }
    if (up.status === 200) {
      if (operationId === 'listNews') return sendPage(res, shapeList(parsed, caller.tier, params));
      if (operationId === 'searchNews') return sendPage(res, shapeSearch(parsed, params));
      const account = await deps.accounts.getAccount(caller.accountId);
      return sendJson(res, 200, usageOf(account!, deps.clock()));
    }
    // Another documented response, chosen with `Prefer`: headers as the service would send them.
    if (up.status === 401 || up.status === 403) for (const h of RATE_LIMIT_HEADERS) res.removeHeader(h);
    if (up.status === 503) {
      res.set('Retry-After', String(limits.unavailableRetryAfterSeconds));
      // Only search's embedding outage is counted; a database outage is answered before counting.
      const counted = operationId === 'searchNews' && parsed?.type === problems.embeddingUnavailable.type;
      if (!counted) for (const h of RATE_LIMIT_HEADERS) res.removeHeader(h);
    }
    if (up.status === 429) setRateLimited(res, caller.tier, deps.clock());
    const type = /problem\+json/.test(up.contentType) ? PROBLEM_TYPE : JSON_TYPE;
    // Prism's own error for a preference the check above leaves to it (e.g. `dynamic`) is passed on as is.
    if (parsed?.type?.startsWith?.('https://stoplight.io/prism/errors')) res.locals.checkResponse = undefined;
    if (parsed === undefined) return void res.status(up.status).end();
    sendJson(res, up.status, parsed, type);
  };

  for (const operationId of Object.keys(OPERATION_PATHS) as OperationId[]) {
    app.get(OPERATION_PATHS[operationId], ...route(operationId), handler(operationId));
  }

  mountMockStatus(app, deps.clock, deps.validateResponses ?? false);
  // Outside the contract: the same answers as the service.
  app.use(...contractFallbacks([...Object.values(OPERATION_PATHS), ...Object.values(STATUS_PATHS)], 'mock: '));

  return { app, close: () => agent.destroy() };
}

/**
 * The request path shared by the service and the mock: which operations exist, who may call them, and
 * the middleware chain in front of every handler: admission (IP guard and key, tier access, rate
 * limit: only admitted requests count), then the repeated-parameter check and schema validation.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { authenticate, type AuthDeps, type Caller } from '../auth/index.js';
import { limits, operationParameters, plans, searchRankingMax } from '../contract/index.js';
import type { RateLimiter } from '../state/ports.js';
import { sendGenericProblem, sendProblem } from './problem.js';
import { echo, pathOnly } from './target.js';
import { createResponseCheck } from './response-check.js';
import { checkQueryShape, openapiValidator, pinQuery } from './validation.js';

export type OperationId = 'listNews' | 'searchNews' | 'getAccountUsage';

export const OPERATION_PATHS: Record<OperationId, string> = {
  listNews: '/v1/news',
  searchNews: '/v1/news/search',
  getAccountUsage: '/v1/account/usage',
};

interface Access {
  /** The usage endpoint answers `free` keys too. */
  allowBlockedTier: boolean;
  counted: boolean;
  requires?: 'search';
}

/** Spec §4: usage is free and answers every tier; search needs the plan's search flag. */
const ACCESS: Record<OperationId, Access> = {
  listNews: { allowBlockedTier: false, counted: true },
  searchNews: { allowBlockedTier: false, counted: true, requires: 'search' },
  getAccountUsage: { allowBlockedTier: true, counted: false },
};

/** What admission leaves for the handler in `res.locals`. */
export interface Locals {
  operationId: OperationId;
  caller: Caller;
}

/** The `limit` default of each operation that takes one, read once from the contract. */
export const LIMIT_DEFAULT: Record<'listNews' | 'searchNews', number> = {
  listNews: operationParameters('listNews').find((p) => p.name === 'limit')!.schema.default,
  searchNews: operationParameters('searchNews').find((p) => p.name === 'limit')!.schema.default,
};

export interface AdmissionDeps {
  auth: AuthDeps;
  rateLimiter: RateLimiter;
  clock: () => number;
  /** Check every response against the contract (tests): a violation throws, which becomes a 500. */
  validateResponses: boolean;
  /** Told of every request refused by the rate limit (metrics). */
  onRateLimited?: (operationId: OperationId) => void;
}

/**
 * Fails closed: a handler only runs on a request the contract validator matched to its operation. Were
 * routing and validation ever to read a request differently again (as the absolute-form target once
 * did), the request is refused instead of reaching a handler with unchecked parameters.
 */
function validated(operationId: OperationId): RequestHandler {
  return (req, res, next) => {
    const matched = (req as Request & { openapi?: { schema?: { operationId?: string } } }).openapi;
    if (matched?.schema?.operationId === operationId) return next();
    res.locals.checkResponse = undefined;
    sendGenericProblem(res, 404, 'Not Found', `No endpoint at ${echo(pathOnly(req.url))}`);
  };
}

/** Operations that take the `tickers` filter (read from the contract). */
const takesTickers = new Set((Object.keys(OPERATION_PATHS) as OperationId[]).filter((id) => operationParameters(id).some((p) => p.name === 'tickers')));

/**
 * The rules between parameters, after each one was validated alone (a `400`, counted): `after` and
 * `before` cannot be combined (listNews); a search page may not pass the ranking (`offset + limit`).
 */
function crossParameterRules(operationId: OperationId): RequestHandler {
  return (req, res, next) => {
    const q = req.query as Record<string, unknown>;
    if (operationId === 'listNews' && q.after !== undefined && q.before !== undefined) return sendProblem(res, 'cursorConflict');
    if (operationId === 'searchNews') {
      const offset = Number(q.offset ?? 0);
      const limit = Number(q.limit ?? LIMIT_DEFAULT.searchNews);
      if (offset + limit > searchRankingMax) return sendProblem(res, 'offsetPastRanking');
    }
    next();
  };
}

/** Builds `chain(operationId)`: the middleware in front of an operation's handler. */
export function createOperationChain(deps: AdmissionDeps): (operationId: OperationId) => RequestHandler[] {
  const validator = openapiValidator();
  const checkResponse = deps.validateResponses ? createResponseCheck() : undefined;

  const admit = (operationId: OperationId) => async (req: Request, res: Response, next: NextFunction) => {
    const now = deps.clock();
    const access = ACCESS[operationId];
    res.locals.operationId = operationId;
    if (checkResponse) res.locals.checkResponse = (status: number, type: string, body: unknown) => checkResponse(operationId, status, type, body);
    const result = await authenticate(deps.auth, { ip: req.ip ?? 'unknown', key: req.get('x-api-key'), now, allowBlockedTier: access.allowBlockedTier });
    if (!result.ok) {
      if (result.retryAfterSeconds !== undefined) res.set('Retry-After', String(result.retryAfterSeconds));
      return sendProblem(res, result.problem);
    }
    const plan = plans[result.caller.tier];
    if (access.requires === 'search' && !plan.search) return sendProblem(res, 'maxPlanOnly');
    // Tier access to a filter (checked before the rate limit, so not counted): `tickers` needs ticker data.
    if (takesTickers.has(operationId) && !plan.tickers && Object.prototype.hasOwnProperty.call(pinQuery(req), 'tickers')) {
      return sendProblem(res, 'tickerFilterMaxPlanOnly');
    }
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
        deps.onRateLimited?.(operationId);
        return sendProblem(res, 'rateLimitExceeded');
      }
    }
    next();
  };

  return (operationId) => [admit(operationId), checkQueryShape(operationId), ...validator, validated(operationId), crossParameterRules(operationId)];
}

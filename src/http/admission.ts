/**
 * The request path shared by the service and the mock: per operation, one middleware reads the query once,
 * then runs admission (IP guard and key, tier access, rate limit: only admitted requests count), checks each
 * parameter against the contract, then the rules between them. Handlers read `caller` and `params` from `res.locals`.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { authenticate, type AuthDeps, type Caller } from '../auth/index.js';
import { limits, operationParameters, plans, searchRankingMax } from '../contract/index.js';
import type { RateLimiter } from '../state/ports.js';
import { sendProblem } from './problem.js';
import { createResponseCheck } from './response-check.js';
import { rateLimitHeaders } from './ratelimit-headers.js';
import { parameterReader, queryOf, readQuery, type QueryValues } from './parameters.js';
import type { operations } from '../../generated/openapi.js';

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

/** An operation's checked, contract-typed parameters; those with a contract default (`limit`, `offset`) always set. */
export type ParamsOf<Op extends OperationId> = NonNullable<operations[Op]['parameters']['query']> &
  Required<
    Pick<
      NonNullable<operations[Op]['parameters']['query']>,
      DefaultedParam & keyof NonNullable<operations[Op]['parameters']['query']>
    >
  >;
type DefaultedParam = 'limit' | 'offset';

/** What admission leaves for the handler in `res.locals`. */
export interface Locals<Op extends OperationId = OperationId> {
  operationId: Op;
  caller: Caller;
  params: ParamsOf<Op>;
}

export interface AdmissionDeps {
  auth: AuthDeps;
  rateLimiter: RateLimiter;
  clock: () => number;
  /** Check every response against the contract (tests): a violation throws, which becomes a 500. */
  validateResponses: boolean;
  /** Told of every request refused by the rate limit (metrics). */
  onRateLimited?: (operationId: OperationId) => void;
}

const takesTickers = new Set(
  (Object.keys(OPERATION_PATHS) as OperationId[]).filter((id) =>
    operationParameters(id).some((p) => p.name === 'tickers'),
  ),
);

/** The rules between parameters, after each was checked alone (a counted `400`). */
function crossParameterProblem(
  operationId: OperationId,
  params: Record<string, unknown>,
  query: QueryValues,
): 'cursorConflict' | 'offsetPastRanking' | 'relevanceWithoutTickers' | undefined {
  if (operationId === 'listNews' && params.after !== undefined && params.before !== undefined) return 'cursorConflict';
  // `min_relevance` always has a value (its default); given without `tickers` it would filter nothing.
  if (Object.hasOwn(query, 'min_relevance') && params.tickers === undefined) return 'relevanceWithoutTickers';
  if (operationId === 'searchNews') {
    if ((params.offset as number) + (params.limit as number) > searchRankingMax) return 'offsetPastRanking';
  }
  return undefined;
}

export function createOperationChain(deps: AdmissionDeps): (operationId: OperationId) => RequestHandler[] {
  const checkResponse = deps.validateResponses ? createResponseCheck() : undefined;

  const pipeline = (operationId: OperationId): RequestHandler => {
    const access = ACCESS[operationId];
    const readParameters = parameterReader(operationId);
    return async (req: Request, res: Response, next: NextFunction) => {
      const now = deps.clock();
      res.locals.operationId = operationId;
      if (checkResponse)
        res.locals.checkResponse = (status: number, type: string, body: unknown) =>
          checkResponse(operationId, status, type, body);
      const query = readQuery(queryOf(req.url));
      // Admission: who is calling, may they, and is there room (authentication before validation).
      const result = await authenticate(deps.auth, {
        ip: req.ip ?? 'unknown',
        key: req.get('x-api-key'),
        now,
        allowBlockedTier: access.allowBlockedTier,
      });
      if (!result.ok) {
        if (result.retryAfterSeconds !== undefined) res.set('Retry-After', String(result.retryAfterSeconds));
        return sendProblem(res, result.problem);
      }
      const plan = plans[result.caller.tier];
      if (access.requires === 'search' && !plan.search) return sendProblem(res, 'maxPlanOnly');
      // Tier access to a filter (checked before the rate limit, so not counted): `tickers` and its `min_relevance`
      // need ticker data.
      const tickerFilter = Object.hasOwn(query, 'tickers') || Object.hasOwn(query, 'min_relevance');
      if (takesTickers.has(operationId) && !plan.tickers && tickerFilter) {
        return sendProblem(res, 'tickerFilterMaxPlanOnly');
      }
      res.locals.caller = result.caller;
      if (access.counted) {
        const d = await deps.rateLimiter.hit(result.caller.keyId, plan.rateLimit, limits.rateWindowMs, now);
        res.set(
          rateLimitHeaders(
            result.caller.tier,
            d,
            limits.rateWindowMs / 1000,
            now,
            d.admitted ? undefined : d.retryAfterSeconds,
          ),
        );
        if (!d.admitted) {
          res.set('Retry-After', String(d.retryAfterSeconds));
          deps.onRateLimited?.(operationId);
          return sendProblem(res, 'rateLimitExceeded');
        }
      }
      // Each parameter against the contract, then the rules between them.
      const reading = readParameters(query);
      if (!reading.ok) return sendProblem(res, 'invalidParameter', reading.detail);
      const conflict = crossParameterProblem(operationId, reading.params, query);
      if (conflict) return sendProblem(res, conflict);
      res.locals.params = reading.params;
      next();
    };
  };

  return (operationId) => [pipeline(operationId)];
}

/**
 * Request validation against openapi.yaml (express-openapi-validator), with the 400 problem `detail`
 * naming the parameter and its rule, both derived from the parameter's schema in the contract.
 * Shared by the service and the mock, so both answer a bad request with the same body.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { openapiDocument, operationParameters, type ParameterSpec } from '../contract/index.js';
import { parseRfc3339 } from '../domain/time.js';
import { sendProblem } from './problem.js';
import { cacheValidatorRouteMatchers } from './route-matchers.js';
import { echo } from './target.js';

/** The rule of a parameter in words, e.g. `an integer between 1 and 100`. */
// The validator's per-request route compilation, memoised (see route-matchers.ts), for every app built here.
cacheValidatorRouteMatchers();

export function ruleText(schema: any): string {
  if (schema.type === 'integer') return `an integer between ${schema.minimum} and ${schema.maximum}`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`;
  if (schema.format === 'date-time') return 'an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z';
  if (schema.type === 'array') return `${schema.minItems} to ${schema.maxItems} upper-case ticker symbols separated by commas, e.g. AAPL,MSFT`;
  // An id (after, before): fixed length and a pattern.
  if (schema.type === 'string' && schema.pattern && schema.minLength === schema.maxLength) return `an article id (a ULID, ${schema.minLength} characters)`;
  if (schema.type === 'string' && schema.minLength !== undefined) {
    return `a string of ${schema.minLength} to ${schema.maxLength} characters, not only spaces`;
  }
  return `a valid ${schema.type}`;
}

export function parameterProblemDetail(param: ParameterSpec, issue: 'invalid' | 'missing' | 'repeated'): string {
  if (issue === 'missing') return `${param.name} is required and must be ${ruleText(param.schema)}`;
  if (issue === 'repeated') return `${param.name} must be given once`;
  return `${param.name} must be ${ruleText(param.schema)}`;
}

export function unknownParameterDetail(name: string): string {
  return `${name === '' ? 'A parameter with an empty name' : echo(name)} is not a parameter of this operation`;
}

/**
 * Query-string parser: like the standard one, except that in `since` a `+` is kept as the offset sign
 * (a hand-typed `since=2026-11-21T10:00:00+02:00` means +02:00, never a space).
 */
export function parseQuery(qs: string): Record<string, string | string[]> {
  // Built with defineProperty: a key such as `__proto__` is an own (unknown, so rejected) parameter.
  const out: Record<string, string | string[]> = {};
  if (!qs) return out;
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    const key = safeDecode(rawKey.replace(/\+/g, ' '));
    const value = safeDecode(key === 'since' ? rawValue : rawValue.replace(/\+/g, ' '));
    const prev = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    const next = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Express 5 parses the query string again on every read of `req.query` (a getter): read it once per
 * request and keep that object (the validator coerces it in place). Idempotent; returns the query.
 */
export function pinQuery(req: Request): Record<string, unknown> {
  if (!Object.prototype.hasOwnProperty.call(req, 'query')) {
    Object.defineProperty(req, 'query', { value: req.query, writable: true, enumerable: true, configurable: true });
  }
  return req.query as Record<string, unknown>;
}

/**
 * What the schema validator cannot see, or sees differently from us: a query key that is not a parameter
 * of the operation, as our parser read it (the validator re-parses the query and drops keys such as
 * `__proto__[x]`), a parameter given twice (it would see an array), an integer written other than in
 * plain decimal digits (its type coercion reads `0x10` or `1e1` as numbers), and a date-time that is not
 * a real instant (`2026-02-30T10:00:00Z`).
 */
export function checkQueryShape(operationId: string): RequestHandler {
  const params = operationParameters(operationId);
  const names = new Set(params.map((p) => p.name));
  return (req, res, next) => {
    pinQuery(req);
    for (const name of Object.keys(req.query)) {
      if (!names.has(name)) return sendProblem(res, 'invalidParameter', unknownParameterDetail(name));
    }
    for (const p of params) {
      const value = req.query[p.name];
      if (Array.isArray(value)) return sendProblem(res, 'invalidParameter', parameterProblemDetail(p, 'repeated'));
      if (p.schema.type === 'integer' && typeof value === 'string' && !/^\d{1,9}$/.test(value)) {
        return sendProblem(res, 'invalidParameter', parameterProblemDetail(p, 'invalid'));
      }
      // An empty list (`tickers=` or a bare `tickers`): none of the items an array parameter requires.
      if (p.schema.type === 'array' && value === '') return sendProblem(res, 'invalidParameter', parameterProblemDetail(p, 'invalid'));
      if (p.schema.format === 'date-time' && typeof value === 'string' && parseRfc3339(value) === undefined) {
        return sendProblem(res, 'invalidParameter', parameterProblemDetail(p, 'invalid'));
      }
    }
    next();
  };
}

/** Request validation only; responses are checked by response-check.ts (see there). */
export function openapiValidator(): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: openapiDocument(),
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: true },
    validateResponses: false,
    validateSecurity: false,
    validateFormats: true,
    ignoreUndocumented: true,
    // No operation takes a body: no multipart middleware in front of every request.
    fileUploader: false,
  }) as unknown as RequestHandler[];
}

interface ValidatorError {
  status?: number;
  errors?: { path?: string; message?: string; errorCode?: string }[];
}

/** Maps a request-validation error of the validator to our 400 problem; passes anything else on. */
export function validationErrorHandler(operationIdOf: (req: Request) => string | undefined) {
  return (err: ValidatorError, req: Request, res: Response, next: NextFunction): void => {
    const operationId = operationIdOf(req);
    if (err?.status !== 400 || !operationId || !Array.isArray(err.errors)) return next(err);
    const params = operationParameters(operationId);
    for (const e of err.errors) {
      const name = (e.path ?? '').replace(/^[./]?query[./]/, '').split(/[./]/)[0] ?? '';
      const param = params.find((p) => p.name === name);
      if (!param) return sendProblem(res, 'invalidParameter', unknownParameterDetail(name || 'parameter'));
      const missing = /required/.test(e.errorCode ?? '') || /must have required property/.test(e.message ?? '');
      return sendProblem(res, 'invalidParameter', parameterProblemDetail(param, missing ? 'missing' : 'invalid'));
    }
    next(err);
  };
}

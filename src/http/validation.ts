/**
 * Request validation against openapi.yaml (express-openapi-validator), with the 400 problem `detail`
 * naming the parameter and its rule, both derived from the parameter's schema in the contract.
 * Shared by the service and the mock, so both answer a bad request with the same body.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { openapiDocument, operationParameters, type ParameterSpec } from '../contract/index.js';
import { sendProblem } from './problem.js';

/** The rule of a parameter in words, e.g. `an integer between 1 and 100`. */
export function ruleText(schema: any): string {
  if (schema.type === 'integer') return `an integer between ${schema.minimum} and ${schema.maximum}`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`;
  if (schema.format === 'date-time') return 'an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z';
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
  return `${name} is not a parameter of this operation`;
}

/**
 * Query-string parser: like the standard one, except that in `since` a `+` is kept as the offset sign
 * (a hand-typed `since=2026-11-21T10:00:00+02:00` means +02:00, never a space).
 */
export function parseQuery(qs: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!qs) return out;
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    const key = safeDecode(rawKey.replace(/\+/g, ' '));
    const value = safeDecode(key === 'since' ? rawValue : rawValue.replace(/\+/g, ' '));
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
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

/** Rejects a parameter given twice before the schema validator sees an array. */
export function rejectRepeated(operationId: string): RequestHandler {
  const params = operationParameters(operationId);
  return (req, res, next) => {
    for (const p of params) {
      if (Array.isArray(req.query[p.name])) return sendProblem(res, 'invalidParameter', parameterProblemDetail(p, 'repeated'));
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

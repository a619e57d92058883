import type { Response } from 'express';
import { problems, type Problem, type ProblemKind } from '../contract/index.js';

export const PROBLEM_TYPE = 'application/problem+json';
export const JSON_TYPE = 'application/json';

/**
 * Sends a JSON body with the contract's exact media type (no `charset` parameter: JSON is UTF-8 by
 * definition, RFC 8259, and the contract names the bare media types).
 */
export function sendJson(res: Response, status: number, body: unknown, type: string = JSON_TYPE): void {
  // Set by the app when responses are validated (tests): throws on a contract violation.
  const check = res.locals.checkResponse as ((status: number, type: string, body: unknown) => void) | undefined;
  check?.(status, type, body);
  const text = JSON.stringify(body);
  res.status(status);
  res.setHeader('Content-Type', type);
  // An explicit length avoids chunked encoding (one write instead of a header + chunk framing).
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Sends one of the contract's problems; `detail` may be replaced (validation names the parameter). */
export function sendProblem(res: Response, kind: ProblemKind, detail?: string): void {
  const body: Problem = detail === undefined ? problems[kind] : { ...problems[kind], detail };
  sendJson(res, body.status, body, PROBLEM_TYPE);
}

/** Problems outside the contract's operations (unknown path, wrong method, unexpected fault). */
export function sendGenericProblem(res: Response, status: number, title: string, detail: string): void {
  const body: Problem = { type: 'about:blank', title, status, detail };
  sendJson(res, status, body, PROBLEM_TYPE);
}

import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { limits, problems, type Problem, type ProblemKind } from '../contract/index.js';
import { isDependencyUnavailable } from './unavailable.js';
import { echo, hostProblem, meantPath, originForm, pathOnly } from './target.js';

export const PROBLEM_TYPE = 'application/problem+json';
export const JSON_TYPE = 'application/json';

/** Sends JSON with the contract's exact media type (no `charset`: JSON is UTF-8 by definition, RFC 8259). */
export function sendJson(res: Response, status: number, body: unknown, type: string = JSON_TYPE): void {
  sendJsonText(res, status, JSON.stringify(body), type, body);
}

/** As sendJson, for a body already serialised (`parsed` spares the response check a parse). */
function sendJsonText(res: Response, status: number, text: string, type: string = JSON_TYPE, parsed?: unknown): void {
  // Set by the app when responses are validated (tests): throws on a contract violation.
  const check = res.locals.checkResponse as ((status: number, type: string, body: unknown) => void) | undefined;
  check?.(status, type, parsed === undefined ? JSON.parse(text) : parsed);
  res.status(status);
  res.setHeader('Content-Type', type);
  // An explicit length avoids chunked encoding.
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

/** An Express app serving the contract (service and mock): paths match exactly as written; requestTarget() first. */
export function contractApp(first?: RequestHandler): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Nothing reads req.query: an operation reads its query once (src/http/parameters.ts).
  app.set('query parser', false);
  app.set('etag', false);
  // Before the first app.use: Express builds its router then, reading these two settings once.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  // Observability first, so that requests refused by requestTarget() are logged and counted too.
  if (first) app.use(first);
  app.use(requestTarget());
  return app;
}

/** Origin-form target before routing, HEAD as GET, and `no-store` on every answer: each depends on the key. */
function requestTarget(): RequestHandler {
  return (req, res, next) => {
    res.setHeader('Cache-Control', 'private, no-store');
    // Node keeps the first of several Host lines; RFC 9112 §3.2 refuses the request instead.
    const host = hostProblem(req);
    if (host !== undefined) return sendGenericProblem(res, 400, 'Bad Request', host);
    const target = originForm(req.url);
    if (!target.ok) return sendGenericProblem(res, 400, 'Bad Request', target.detail);
    // HEAD is GET without the body (RFC 9110 §9.3.2): routed, validated and counted as GET.
    if (req.method === 'HEAD') req.method = 'GET';
    req.url = target.url;
    req.originalUrl = target.url;
    next();
  };
}

/** The tail of a contract app: 405, 404, then the error handler (413, 503, 500); echoes are cut at ECHO_MAX_CHARS. */
export function contractFallbacks(
  knownPaths: Iterable<string>,
  logPrefix: string,
): [RequestHandler, (err: any, req: Request, res: Response, next: NextFunction) => void] {
  const known = new Set(knownPaths);
  const notFound: RequestHandler = (req, res) => {
    const path = pathOnly(req.url);
    if (known.has(path)) {
      // HEAD is served as GET (requestTarget), so both are allowed.
      res.set('Allow', 'GET, HEAD');
      return sendGenericProblem(
        res,
        405,
        'Method Not Allowed',
        `${echo(req.method)} is not allowed on ${path}; use GET`,
      );
    }
    const meant = meantPath(path, known);
    sendGenericProblem(res, 404, 'Not Found', `No endpoint at ${echo(path)}${meant ? `; did you mean ${meant}?` : ''}`);
  };
  const onError = (err: any, _req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return;
    res.locals.checkResponse = undefined;
    if (err?.type === 'entity.too.large' || err?.status === 413)
      return sendGenericProblem(res, 413, 'Content Too Large', 'Requests take no body');
    if (isDependencyUnavailable(err)) {
      res.set('Retry-After', String(limits.unavailableRetryAfterSeconds));
      return sendProblem(res, 'serviceUnavailable');
    }
    console.error(`${logPrefix}unexpected error:`, err instanceof Error ? err.stack : err);
    sendGenericProblem(res, 500, 'Internal Server Error', 'Unexpected error; the request can be retried');
  };
  return [notFound, onError];
}

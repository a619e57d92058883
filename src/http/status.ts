/** Public status routes (`/v1/status`, HTML `/status`): no key, no rate limit, served from memory, never the store. */
import type express from 'express';
import { parameterReader, queryOf, readQuery } from './parameters.js';
import { JSON_TYPE, sendProblem } from './problem.js';
import { createResponseCheck } from './response-check.js';

export interface StatusSource {
  /** The report as JSON text; `example` names one of the contract's examples (the mock's `Prefer`). */
  json(example?: string): string;
  html(): string;
}

export const STATUS_PATHS = { json: '/v1/status', page: '/status' } as const;

/** The report is the same for everyone and changes every few seconds. */
const CACHE_CONTROL = 'public, max-age=5';

export interface StatusRouteOptions {
  validateResponses: boolean;
  /** Runs first on `/v1/status` (the mock's `Prefer`): `false` when it answered, else the example to serve. */
  prefer?: (req: express.Request, res: express.Response) => string | undefined | false;
}

/** The bytes of the last text given, encoded once: a report is sent many times between two refreshes. */
function lastEncoded(): (text: string) => Buffer {
  let last = { text: '', bytes: Buffer.alloc(0) };
  return (text) => {
    if (text !== last.text) last = { text, bytes: Buffer.from(text) };
    return last.bytes;
  };
}

function send(res: express.Response, type: string, bytes: Buffer): void {
  res.status(200);
  res.setHeader('Cache-Control', CACHE_CONTROL);
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

export function mountStatus(app: express.Express, status: StatusSource, opts: StatusRouteOptions): void {
  const readParams = parameterReader('getServiceStatus');
  const check = opts.validateResponses ? createResponseCheck() : undefined;
  const jsonBytes = lastEncoded();
  const pageBytes = lastEncoded();
  app.get(STATUS_PATHS.json, (req, res) => {
    if (check)
      res.locals.checkResponse = (code: number, type: string, body: unknown) =>
        check('getServiceStatus', code, type, body);
    const params = readParams(readQuery(queryOf(req.url)));
    if (!params.ok) return sendProblem(res, 'invalidParameter', params.detail);
    const example = opts.prefer?.(req, res);
    if (example === false) return;
    const text = status.json(example);
    check?.('getServiceStatus', 200, JSON_TYPE, JSON.parse(text));
    send(res, JSON_TYPE, jsonBytes(text));
  });
  app.get(STATUS_PATHS.page, (_req, res) => send(res, 'text/html; charset=utf-8', pageBytes(status.html())));
}

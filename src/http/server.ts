/**
 * The HTTP server around an app (the service's and the mock's). Every HTTP error the process emits is
 * an `application/problem+json` body, including those Node answers before any app code runs: a request
 * it cannot parse (400), headers or a URL over its size limit (431), a request that takes too long to
 * arrive (408), an `Expect` it does not meet (417), and an upgrade to a path with no WebSocket (404).
 * An HTTP/1.1 request without `Host` is refused by requestTarget() with a 400 problem.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { limits } from '../contract/index.js';
import { PROBLEM_TYPE } from './problem.js';
import { echo, originForm, pathOnly } from './target.js';

/** A complete HTTP/1.1 response with a problem body, for writing straight to a socket. */
export function rawProblemResponse(status: number, detail: string, extraHeaders: Record<string, string> = {}): string {
  const title = STATUS_CODES[status] ?? 'Error';
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  const headers = {
    'Content-Type': PROBLEM_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    Connection: 'close',
    ...extraHeaders,
  };
  return `HTTP/1.1 ${status} ${title}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`;
}

/** What Node's parser refused, as a status and a detail (never echoing the request). */
export function clientErrorProblem(code: string | undefined): { status: number; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, detail: `The request line and headers are larger than this server accepts (${limits.requestHeadMaxBytes} bytes)` };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, detail: 'The request did not arrive in time' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, detail: 'The request method is not a valid HTTP method' };
    case 'HPE_INVALID_URL':
      return { status: 400, detail: 'The request target is not a valid URL' };
    case 'HPE_INVALID_VERSION':
      return { status: 400, detail: 'The HTTP version is not supported; use HTTP/1.1' };
    default:
      return { status: 400, detail: 'The request is not valid HTTP/1.1 (malformed request line, header or framing)' };
  }
}

function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, detail } = clientErrorProblem(err.code);
  socket.end(rawProblemResponse(status, detail));
}

function onCheckExpectation(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify({ type: 'about:blank', title: 'Expectation Failed', status: 417, detail: 'Only Expect: 100-continue is supported' });
  res.writeHead(417, { 'Content-Type': PROBLEM_TYPE, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', Connection: 'close' });
  res.end(body);
  req.resume();
}

/** An upgrade the server has no WebSocket for: a problem response, then the connection is closed. */
export function refuseUpgrade(socket: Duplex, status: number, detail: string): void {
  socket.on('error', () => socket.destroy());
  socket.end(rawProblemResponse(status, detail));
}

/**
 * Routes an upgrade request as the REST app routes a request: the target reduced to its origin form
 * (`req.url` rewritten), the path matched exactly. False (and the socket answered with a 400 or 404
 * problem) when it is not for `address`.
 */
export function acceptUpgradeFor(address: string, req: IncomingMessage, socket: Duplex): boolean {
  const target = originForm(req.url);
  if (!target.ok) {
    refuseUpgrade(socket, 400, target.detail);
    return false;
  }
  const path = pathOnly(target.url);
  if (path !== address) {
    refuseUpgrade(socket, 404, `No WebSocket at ${echo(path)}; the stream is at ${address}`);
    return false;
  }
  req.url = target.url;
  return true;
}

export function createHttpServer(listener: RequestListener): Server {
  // Node's own missing-Host answer has no body: the app answers it instead (requestTarget()).
  const server = createServer({ maxHeaderSize: limits.requestHeadMaxBytes, requireHostHeader: false }, listener);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', onClientError);
  server.on('checkExpectation', onCheckExpectation);
  return server;
}

/**
 * The HTTP server around an app: every HTTP error the process emits is an `application/problem+json` body,
 * including Node's own (400, 408, 417, 431) and a 404 for an upgrade with no WebSocket.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { limits, problems, type Problem } from '../contract/index.js';
import { PROBLEM_TYPE } from './problem.js';
import { echo, hostProblem, originForm, pathOnly } from './target.js';

/** A complete HTTP/1.1 response with a problem body, for writing straight to a socket. */
function rawProblemResponse(
  status: number,
  detail: string,
  extraHeaders: Record<string, string> = {},
  problem?: Problem,
): string {
  const title = problem?.title ?? STATUS_CODES[status] ?? 'Error';
  const body = JSON.stringify(problem ?? { type: 'about:blank', title, status, detail });
  const headers = {
    'Content-Type': PROBLEM_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    Connection: 'close',
    ...extraHeaders,
  };
  return `HTTP/1.1 ${status} ${title}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n${body}`;
}

/** What Node's parser refused, as a status and a detail (never echoing the request). */
function clientErrorProblem(code: string | undefined): { status: number; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        detail: `The request line and headers are larger than this server accepts (${limits.requestHeadMaxBytes} bytes)`,
      };
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
  const body = JSON.stringify({
    type: 'about:blank',
    title: 'Expectation Failed',
    status: 417,
    detail: 'Only Expect: 100-continue is supported',
  });
  res.writeHead(417, {
    'Content-Type': PROBLEM_TYPE,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.end(body);
  req.resume();
}

function refuseUpgrade(socket: Duplex, status: number, detail: string, headers: Record<string, string> = {}): void {
  socket.on('error', () => socket.destroy());
  socket.end(rawProblemResponse(status, detail, headers));
}

/** A WebSocket handshake `ws` found malformed (its `wsClientError`), as a problem: 405 for the method, else 400. */
export function refuseHandshake(socket: Duplex, error: Error): void {
  if (error.message === 'Invalid HTTP method')
    return refuseUpgrade(socket, 405, 'The stream is opened with GET', { Allow: 'GET' });
  // RFC 6455 §4.4: a version the server does not speak is answered with the versions it does.
  const version = /Sec-WebSocket-Version/.test(error.message) ? { 'Sec-WebSocket-Version': '13, 8' } : undefined;
  refuseUpgrade(socket, 400, `Not a valid WebSocket handshake: ${error.message}`, version);
}

/** Routes an upgrade as REST does (one Host, origin form, exact path); false, with a 400/404 answered, when not for `address`. */
export function acceptUpgradeFor(address: string, req: IncomingMessage, socket: Duplex): boolean {
  const host = hostProblem(req);
  if (host !== undefined) {
    refuseUpgrade(socket, 400, host);
    return false;
  }
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

/**
 * Client timeouts and connection caps. No head within `headersTimeoutMs` or request within `requestTimeoutMs`:
 * 408 and close (checked every `checkIntervalMs`: Node's 30 s let idle connections hold descriptors). Idle
 * keep-alive closes after `keepAliveTimeoutMs` (65 s: past a load balancer's usual 60 s, so the balancer closes
 * first). A connection over `maxConnections` or `maxConnectionsPerAddress` (0: none; streams included) gets
 * the contract's 503 before its request is read (docs/operations.md).
 */
export interface HttpServerOptions {
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  checkIntervalMs?: number;
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
  /** Told of every connection refused at a cap (a metric; not a log line per connection in a flood). */
  onConnectionRefused?: (cap: 'total' | 'per_address') => void;
}

const HTTP_TIMEOUTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 65_000,
  checkIntervalMs: 1000,
} as const;
/** A refused connection that does not close its side is cut this long after the 503 was written. */
const REFUSED_LINGER_MS = 2000;

/** The request asks for a WebSocket (`Upgrade` names `websocket` among its protocols). */
function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').split(',').some((p) => p.trim().toLowerCase() === 'websocket');
}

export function createHttpServer(listener: RequestListener, options: HttpServerOptions = {}): Server {
  const t = { ...HTTP_TIMEOUTS, ...options };
  // Node's own missing-Host answer has no body: the app answers it instead (requestTarget()).
  // Only a WebSocket upgrade leaves HTTP: another offer (`h2c` from curl --http2 or Java's HttpClient) is ignored,
  // as RFC 9110 §7.8 lets a server do, and the request answered like any other (Node 22.21 and 24.9 on; the
  // option is missing from the pinned @types/node, hence the variable).
  const serverOptions = {
    maxHeaderSize: limits.requestHeadMaxBytes,
    requireHostHeader: false,
    headersTimeout: t.headersTimeoutMs,
    requestTimeout: t.requestTimeoutMs,
    connectionsCheckingInterval: t.checkIntervalMs,
    // With no upgrade listener (the stream closed during shutdown) the request is answered as HTTP, not dropped.
    shouldUpgradeCallback: (req: IncomingMessage) => isWebSocketUpgrade(req) && server.listenerCount('upgrade') > 0,
  };
  const server: Server = createServer(serverOptions, listener);
  server.keepAliveTimeout = t.keepAliveTimeoutMs;
  server.on('clientError', onClientError);
  // Without a listener Node drops a CONNECT's connection unanswered; it is a target this server cannot serve.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const target = originForm(req.url);
    refuseUpgrade(
      socket,
      400,
      target.ok ? 'CONNECT is not supported; send GET with a path such as /v1/news' : target.detail,
    );
  });
  server.on('checkExpectation', onCheckExpectation);
  capConnections(
    server,
    options.maxConnections ?? 0,
    options.maxConnectionsPerAddress ?? 0,
    options.onConnectionRefused,
  );
  return server;
}

/** The caps, in front of Node's connection handling: a refused connection never reaches the HTTP parser. */
function capConnections(
  server: Server,
  total: number,
  perAddress: number,
  onRefused?: (cap: 'total' | 'per_address') => void,
): void {
  if (total <= 0 && perAddress <= 0) return;
  const listeners = server.listeners('connection');
  if (listeners.length !== 1) throw new Error("createHttpServer: expected exactly Node's own connection listener");
  const http = listeners[0] as (socket: Socket) => void;
  server.removeListener('connection', http);
  let open = 0;
  const byAddress = new Map<string, number>();
  // The contract's own 503 (every operation documents it): the problem, Retry-After, then the close.
  const p = problems.serviceUnavailable;
  const refusal = rawProblemResponse(
    p.status,
    p.detail,
    { 'Retry-After': String(limits.unavailableRetryAfterSeconds) },
    p,
  );
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const mine = byAddress.get(address) ?? 0;
    const over =
      total > 0 && open >= total ? 'total' : perAddress > 0 && mine >= perAddress ? 'per_address' : undefined;
    if (over) {
      socket.on('error', () => socket.destroy());
      // Read and drop its bytes so the client's FIN closes the socket; cut off after REFUSED_LINGER_MS.
      socket.resume();
      socket.end(refusal);
      setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      onRefused?.(over);
      return;
    }
    open++;
    byAddress.set(address, mine + 1);
    socket.once('close', () => {
      open--;
      const n = (byAddress.get(address) ?? 1) - 1;
      if (n === 0) byAddress.delete(address);
      else byAddress.set(address, n);
    });
    http.call(server, socket);
  });
}

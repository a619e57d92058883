/**
 * One HTTP/1.x exchange over a raw TCP socket (node:net), so a request line is sent exactly as
 * generated (http.request would normalise the target and the headers), and a tiny response parser:
 * status line, headers, then a body framed by Content-Length, by chunked encoding, or by the close.
 * Every request carries `Connection: close`, so one socket is one exchange.
 */
import { connect } from 'node:net';

export interface RawRequest {
  port: number;
  /** Loopback source address (127.x.y.z), so each case plays its own client IPs. */
  localAddress: string;
  /** The bytes before the headers, without CRLF, e.g. `GET /v1/news HTTP/1.1`. */
  requestLine: string;
  /** Header lines in order, sent as `name: value` (duplicates allowed). */
  headers: [string, string][];
  /**
   * HEAD: the response has no body whatever Content-Length says. `either`: a HEAD the server may not
   * have parsed as one (a malformed request): a body is read when bytes follow the head.
   */
  head?: boolean | 'either';
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  statusLine: string;
  /** Lower-cased names; a repeated header keeps every value. */
  headers: Record<string, string[]>;
  /** The body as text (UTF-8), after de-chunking. */
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
  /** Bytes after the framed body (a second response on a `Connection: close` exchange is a fault). */
  trailing: number;
}

export class RawHttpError extends Error {}

/** The single value of a header (undefined when absent; the first one when repeated). */
export function header(res: RawResponse, name: string): string | undefined {
  return res.headers[name.toLowerCase()]?.[0];
}

export function rawRequest(req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port: req.port, localAddress: req.localAddress });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new RawHttpError(`no complete response within ${req.timeoutMs ?? 10_000} ms`));
    }, req.timeoutMs ?? 10_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the server has written its whole response (it refused the rest of our
      // request) still leaves a complete response to read.
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks), req.head ?? false));
      } catch (err) {
        reject(err);
      }
    });
    socket.on('connect', () => {
      const head = `${req.requestLine}\r\n${req.headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;
      // latin1: every generated character is one byte (raw UTF-8 bytes are generated as latin1 chars).
      // No half-close (end): Node's server aborts a request whose socket ends before it answered.
      // `Connection: close` makes the server close once it has answered.
      socket.write(Buffer.from(head, 'latin1'));
    });
  });
}

export function parseResponse(buf: Buffer, headRequest: boolean | 'either'): RawResponse {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1)
    throw new RawHttpError(
      `no complete response head in ${buf.length} bytes: ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`,
    );
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const statusLine = lines[0]!;
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  if (!m) throw new RawHttpError(`bad status line ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string[]> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new RawHttpError(`bad header line ${JSON.stringify(line)}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  const status = Number(m[1]);
  let rest = buf.subarray(end + 4);
  const head = headRequest === true || (headRequest === 'either' && rest.length === 0);
  let bodyBuf: Buffer;
  const te = headers['transfer-encoding']?.join(',').toLowerCase();
  const cl = headers['content-length'];
  if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) {
    bodyBuf = Buffer.alloc(0);
  } else if (te && te.includes('chunked')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd === -1) throw new RawHttpError('truncated chunked body');
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1').split(';')[0]!, 16);
      if (Number.isNaN(size)) throw new RawHttpError('bad chunk size');
      rest = rest.subarray(lineEnd + 2);
      if (size === 0) {
        const trailerEnd = rest.indexOf('\r\n\r\n');
        rest = trailerEnd === -1 ? rest.subarray(rest.indexOf('\r\n') + 2) : rest.subarray(trailerEnd + 4);
        break;
      }
      if (rest.length < size + 2) throw new RawHttpError('truncated chunk');
      parts.push(rest.subarray(0, size));
      rest = rest.subarray(size + 2);
    }
    bodyBuf = Buffer.concat(parts);
  } else if (cl !== undefined) {
    if (new Set(cl).size !== 1 || !/^\d+$/.test(cl[0]!))
      throw new RawHttpError(`bad Content-Length ${JSON.stringify(cl)}`);
    const n = Number(cl[0]);
    if (rest.length < n) throw new RawHttpError(`body shorter (${rest.length}) than Content-Length ${n}`);
    bodyBuf = rest.subarray(0, n);
    rest = rest.subarray(n);
  } else {
    bodyBuf = rest;
    rest = Buffer.alloc(0);
  }
  const text = bodyBuf.toString('utf8');
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status, statusLine, headers, text, body, trailing: rest.length };
}

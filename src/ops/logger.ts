/**
 * Structured logs (pino): one JSON line per REST request and stream event; readable lines on a terminal. Never
 * logged: an API key, X-API-Key, a query string (requests carry the key id); free text is scrubbed of key shapes.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { hasUnsafe, printable, printableJson } from '../domain/printable.js';
import type { Log, LogFields } from '../domain/log.js';

export interface LogSink {
  write(line: string): void;
}

export interface LoggerOptions {
  /** Where lines go (each call gets one line ending in `\n`). Default: stdout. */
  destination?: LogSink;
  /** Single human-readable lines instead of JSON. Default: stdout is a terminal (and no destination given). */
  pretty?: boolean;
  level?: string;
}

export interface RequestLine {
  requestId: string;
  method: string;
  /** The OperationId admission matched; undefined when no route did. */
  operation?: string;
  /** Only for requests no operation matched: the path, without its query, keys redacted. */
  path?: string;
  status: number;
  latencyMs: number;
  /** Set once admission has resolved the key (never the key itself). */
  keyId?: string;
  /** The client went away before the response was complete. */
  aborted?: boolean;
}

export type StreamEvent =
  | { event: 'open'; connectionId: string; accountId: string; keyId: string }
  | { event: 'close'; connectionId: string; accountId: string; keyId: string; code: number; durationMs: number }
  | { event: 'refused'; connectionId: string; code: number; reason: string }
  /** A shared slot adapter took over the slot of a connection whose holder stopped renewing its lease. */
  | { event: 'takeover'; connectionId: string; accountId: string; previousConnectionId?: string };

export interface OpsLogger {
  log(msg: string): void;
  request(r: RequestLine): void;
  stream(e: StreamEvent): void;
  /** The underlying pino logger (child loggers, other levels). */
  readonly pino: Logger;
  /** The structured log the service's modules write to (a child per component), keys scrubbed from every text. */
  readonly structured: Log;
}

/** A Log over pino whose message and string fields are scrubbed of anything shaped like a key. */
function scrubbedLog(logger: Logger): Log {
  const clean = (fields: LogFields): LogFields => {
    const out: LogFields = {};
    for (const [k, v] of Object.entries(fields))
      out[k] = typeof v === 'string' ? scrubKeys(v) : v instanceof Error ? scrubKeys(v.message) : v;
    return out;
  };
  return {
    info: (f, m) => logger.info(clean(f), scrubKeys(m)),
    warn: (f, m) => logger.warn(clean(f), scrubKeys(m)),
    error: (f, m) => logger.error(clean(f), scrubKeys(m)),
    child: (b) => scrubbedLog(logger.child(clean(b))),
  };
}

/** Anything shaped like an API key (`<brand>_live_…` / `<brand>_test_…`). */
const KEY_SHAPE = /\b[a-z][a-z0-9]{1,15}_(?:live|test)_[A-Za-z0-9_-]{6,}/g;

export function scrubKeys(text: string): string {
  return text.replace(KEY_SHAPE, '[key redacted]');
}

export function createLogger(opts: LoggerOptions = {}): OpsLogger {
  const pretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true);
  let dest: DestinationStream;
  if (pretty) {
    const out = opts.destination ?? process.stdout;
    dest = { write: (line: string) => void out.write(formatLine(line)) };
  } else {
    dest = opts.destination ?? pino.destination({ dest: 1, sync: false });
  }
  const logger = pino(
    {
      level: opts.level ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Belt and braces: were a key or the header ever put in a log object, it would not be written.
      redact: {
        paths: ['key', 'api_key', 'apiKey', 'headers["x-api-key"]', 'req.headers["x-api-key"]'],
        censor: '[redacted]',
      },
    },
    dest,
  );

  return {
    pino: logger,
    structured: scrubbedLog(logger),
    log(msg) {
      logger.info(scrubKeys(msg));
    },
    request(r) {
      const fields: Record<string, unknown> = {
        kind: 'request',
        request_id: r.requestId,
        method: r.method,
        operation: r.operation ?? null,
        status: r.status,
        latency_ms: Math.round(r.latencyMs * 1000) / 1000,
      };
      if (r.path !== undefined) fields.path = r.path;
      if (r.keyId !== undefined) fields.key_id = r.keyId;
      if (r.aborted) fields.aborted = true;
      const msg = `${r.method} ${r.operation ?? r.path ?? '-'} ${r.status}`;
      if (r.status >= 500) logger.error(fields, msg);
      else logger.info(fields, msg);
    },
    stream(e) {
      const fields: Record<string, unknown> = { kind: 'stream', event: e.event, connection_id: e.connectionId };
      let msg: string;
      switch (e.event) {
        case 'open':
          Object.assign(fields, { account_id: e.accountId, key_id: e.keyId });
          msg = 'stream open';
          break;
        case 'close':
          Object.assign(fields, { account_id: e.accountId, key_id: e.keyId, code: e.code, duration_ms: e.durationMs });
          msg = `stream close ${e.code}`;
          break;
        case 'refused':
          Object.assign(fields, { code: e.code, reason: e.reason });
          msg = `stream refused ${e.code}`;
          break;
        case 'takeover':
          Object.assign(fields, {
            account_id: e.accountId,
            ...(e.previousConnectionId ? { previous_connection_id: e.previousConnectionId } : {}),
          });
          msg = 'stream slot takeover';
          break;
      }
      logger.info(fields, msg);
    },
  };
}

const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

/** A JSON log line as one readable line, outside text escaped (domain/printable.ts) so a record stays one safe line. */
export function formatLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `${printable(json.endsWith('\n') ? json.slice(0, -1) : json)}\n`;
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    return `${printable(json.endsWith('\n') ? json.slice(0, -1) : json)}\n`;
  const time = typeof o.time === 'string' ? printable(o.time.slice(11, 23)) : '';
  const level = printable(
    String(o.level ?? '')
      .toUpperCase()
      .padEnd(5),
  );
  const rest: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    if (HIDDEN.has(k) || v === null || v === undefined) continue;
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    rest.push(`${printable(k)}=${/[\s"=]/.test(s) || hasUnsafe(s) ? printableJson(s) : s}`);
  }
  return `${time} ${level} ${printable(String(o.msg ?? ''))}${rest.length ? `  ${rest.join(' ')}` : ''}\n`;
}

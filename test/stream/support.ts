/**
 * Stream test support: the stream attached to a real HTTP server on loopback, a temp SQLite file, real
 * `ws` clients, and a validator for the Article payload of asyncapi.yaml (parsed with @asyncapi/parser).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Parser, fromFile } from '@asyncapi/parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterEach, beforeEach, expect } from 'vitest';
import { WebSocket } from 'ws';
import { createKey } from '../../src/cli/operator.js';
import { limits, stream as streamRules, streamAddress } from '../../src/contract/index.js';
import { MemoryIpGuard } from '../../src/state/memory.js';
import type { NewArticle } from '../../src/store/ports/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { attachStream, type StreamDeps, type StreamHandle } from '../../src/stream/index.js';
import { MemoryStreamSlots, type StreamSlots } from '../../src/state/stream-slots.js';
import { FakeClock, LIVE } from '../support/service.js';
import { repoRoot } from '../support/specs.js';
import { until } from '../support/wait.js';
import { recordLog } from '../support/log.js';

/** Waits for a condition (a deadline, not a timing assertion). */
export const waitFor = (cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> =>
  until(cond, what, timeoutMs);

export { LIVE };

// ---- the Article payload of asyncapi.yaml ----

const parsed = await fromFile(new Parser(), `${repoRoot}/asyncapi.yaml`).parse();
if (!parsed.document)
  throw new Error(`asyncapi.yaml does not parse: ${parsed.diagnostics.map((d) => d.message).join('; ')}`);
const articleMessage = parsed.document
  .components()
  .messages()
  .all()
  .find((m) => m.name() === 'Article');
if (!articleMessage?.payload()) throw new Error('asyncapi.yaml has no Article message payload');
const payloadAjv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(payloadAjv);
const validatePayload = payloadAjv.compile(articleMessage.payload()!.json());

/** '' when `value` is a valid Article message of asyncapi.yaml, else the reasons. */
export function articleErrors(value: unknown): string {
  return validatePayload(value) ? '' : payloadAjv.errorsText(validatePayload.errors);
}

// ---- the service side ----

export interface StreamHarness {
  port: number;
  url: string;
  /** The temp SQLite file (like DATA_DIR/fns.sqlite). */
  file: string;
  store: SqliteStore;
  clock: FakeClock;
  /** The stream's slots: in memory unless the test passed its own (`slots` option). */
  slots: StreamSlots & { inUse(): number };
  stream: StreamHandle;
  logs: string[];
  key(
    tier: 'starter' | 'pro' | 'max' | 'free',
    accountId?: string,
  ): Promise<{ key: string; key_id: string; account_id: string }>;
  /** Inserts articles now (clock time) through `store` (default: the service's own store). */
  ingest(articles: Partial<NewArticle>[], store?: SqliteStore): Promise<void>;
  close(): Promise<void>;
}

type Options = Partial<
  Pick<StreamDeps, 'recheckMs' | 'pingIntervalMs' | 'maxBufferedBytes' | 'trustProxy' | 'feedPollMs' | 'fanOutSliceMs'>
> & {
  /** Another slots adapter (a Redis one, a fake slow one); default: a fresh MemoryStreamSlots. */
  slots?: StreamSlots & { inUse(): number };
};

export function newArticle(a: Partial<NewArticle> = {}): NewArticle {
  return {
    content: 'Fed holds rates steady',
    urgency: 'regular',
    sentiment: null,
    published_at: null,
    tickers: [],
    ...a,
  };
}

export async function startStream(opts: Options = {}): Promise<StreamHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'fns-stream-'));
  const file = join(dir, 'fns.sqlite');
  const store = new SqliteStore(file);
  const clock = new FakeClock();
  const slots = opts.slots ?? new MemoryStreamSlots();
  const logs: string[] = [];
  const server: Server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const stream = attachStream(server, {
    accounts: store.accounts,
    articles: store.articles,
    ipGuard: new MemoryIpGuard(limits.ipGuard),
    livePrefix: LIVE,
    clock: clock.fn,
    trustProxy: opts.trustProxy ?? false,
    slots,
    recheckMs: opts.recheckMs ?? streamRules.recheckSeconds * 1000,
    ...(opts.pingIntervalMs !== undefined ? { pingIntervalMs: opts.pingIntervalMs } : {}),
    ...(opts.maxBufferedBytes !== undefined ? { maxBufferedBytes: opts.maxBufferedBytes } : {}),
    ...(opts.feedPollMs !== undefined ? { feedPollMs: opts.feedPollMs } : {}),
    ...(opts.fanOutSliceMs !== undefined ? { fanOutSliceMs: opts.fanOutSliceMs } : {}),
    log: recordLog(logs),
  });
  await stream.ready;
  return {
    port,
    url: `ws://127.0.0.1:${port}${streamAddress}`,
    file,
    store,
    clock,
    slots,
    stream,
    logs,
    key: async (tier, accountId) => {
      // A named account is made on first use (accounts are created explicitly, then given keys).
      if (accountId && !(await store.accounts.getAccount(accountId)))
        await store.accounts.createAccount(tier, clock.now, accountId);
      return createKey(store.accounts, { tier, livePrefix: LIVE, now: clock.now, ...(accountId ? { accountId } : {}) });
    },
    async ingest(articles, via = store) {
      await via.articles.insert(articles.map(newArticle), clock.now);
    },
    async close() {
      await stream.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- the client side ----

export interface Closed {
  code: number;
  reason: string;
}

export class TestClient {
  readonly messages: any[] = [];
  readonly receivedAt: number[] = [];
  /** Messages that are not valid Article payloads of asyncapi.yaml (with the reasons). */
  readonly invalid: string[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<Closed>;
  closeEvent: Closed | undefined;
  pings = 0;
  private waiters: (() => void)[] = [];

  constructor(readonly ws: WebSocket) {
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    this.opened.catch(() => {});
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        this.closeEvent = { code, reason: reason.toString() };
        resolve(this.closeEvent);
        this.wake();
      }),
    );
    ws.on('error', () => {});
    ws.on('ping', () => {
      this.pings++;
    });
    ws.on('message', (data, isBinary) => {
      const at = Date.now();
      let value: unknown;
      try {
        if (isBinary) throw new Error('binary message');
        value = JSON.parse(data.toString());
      } catch (e) {
        this.invalid.push(`not a JSON text message: ${(e as Error).message}`);
        return;
      }
      const errors = articleErrors(value);
      if (errors) this.invalid.push(errors);
      this.messages.push(value);
      this.receivedAt.push(at);
      this.wake();
    });
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Resolves when `n` messages are in (or the connection closed, or `timeoutMs` passed). */
  async received(n: number, timeoutMs = 5000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < n && !this.closeEvent && Date.now() < deadline) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.messages;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

const clients = new Set<TestClient>();

export function connect(
  url: string,
  opts: {
    key?: string;
    headerKey?: string;
    ip?: string;
    autoPong?: boolean;
    path?: string;
    headers?: Record<string, string>;
  } = {},
): TestClient {
  const u = new URL(url);
  if (opts.path !== undefined) u.pathname = opts.path;
  if (opts.key !== undefined) u.searchParams.set('api_key', opts.key);
  const ws = new WebSocket(u, {
    localAddress: opts.ip ?? '127.0.0.1',
    autoPong: opts.autoPong ?? true,
    headers: { ...(opts.headerKey !== undefined ? { 'X-API-Key': opts.headerKey } : {}), ...opts.headers },
  });
  const client = new TestClient(ws);
  clients.add(client);
  return client;
}

/** Every client of the test, cut off (call in afterEach); returns their invalid messages. */
export function dropClients(): string[] {
  const invalid: string[] = [];
  for (const c of clients) {
    invalid.push(...c.invalid);
    c.ws.terminate();
  }
  clients.clear();
  return invalid;
}

/** Opens a client and waits until the service has admitted it. */
export async function connectAdmitted(
  h: StreamHarness,
  opts: Parameters<typeof connect>[1] & { url?: string },
): Promise<TestClient> {
  const before = h.stream.connections();
  const c = connect(opts?.url ?? h.url, opts);
  await c.opened;
  await waitFor(() => h.stream.connections() > before || c.closeEvent !== undefined, 'admission');
  if (c.closeEvent) throw new Error(`closed on connect: ${c.closeEvent.code} ${c.closeEvent.reason}`);
  return c;
}

/**
 * One harness per test: a fresh stream before each test; after it, every client must have been
 * dropped, and the stream is closed. Read the harness as `ctx.h` inside tests.
 */
export function useStreamHarness(opts: Options = {}): { readonly h: StreamHarness } {
  const ctx = {} as { h: StreamHarness };
  beforeEach(async () => {
    ctx.h = await startStream(opts);
  });
  afterEach(async () => {
    expect(dropClients()).toEqual([]);
    await ctx.h.close();
  });
  return ctx;
}

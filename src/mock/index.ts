/**
 * The partner mock on one loopback port: the REST contract (Prism behind a front playing the sandbox tiers) and
 * `/v1/stream` (asyncapi.yaml's examples). Configuration is passed in; only scripts/mock.ts reads the environment.
 */
import type { Server } from 'node:http';
import { createHttpServer } from '../http/server.js';
import type { AddressInfo } from 'node:net';
import { streamExamples } from '../../generated/stream.js';
import { limits, openapiPath, type Tier } from '../contract/index.js';
import type { AuthDeps } from '../auth/index.js';
import { startPrism, type RunningPrism } from './prism.js';
import { createMockApp } from './rest.js';
import { AdmitAllRateLimiter } from '../state/memory.js';
import { openIpGuard, SandboxAccounts } from './sandbox.js';
import { attachMockStream, exampleArticles, type MockStream } from './stream.js';
import { startMockWebhooks, type MockWebhooks } from './webhooks.js';

export interface MockOptions {
  /** Port of the mock (REST and stream); 0 picks a free one. Default 4010. */
  port?: number;
  /** Loopback address to listen on. Default 127.0.0.1. */
  host?: string;
  /** OpenAPI document served by Prism. Default generated/openapi.json (openapi.yaml bundled). */
  specPath?: string;
  /** One stream article every `streamIntervalMs`. Default 2000. */
  streamIntervalMs?: number;
  /** How many pushed stream articles are kept for `after=` replays. Default 10,000. */
  streamHistory?: number;
  /** Prefix of the sandbox keys. Default `fns_test_` (x-limits.keyPrefixes.test). */
  testPrefix?: string;
  /** Base environment for the Prism child (telemetry switches are always added). */
  prismEnv?: Record<string, string | undefined>;
  /** Check every REST response against the contract (tests): a violation becomes a 500. Default false. */
  validateResponses?: boolean;
  /** POST a signed sample `article` webhook here (MOCK_WEBHOOK_URL) every `webhookIntervalMs`, default 5000. */
  webhookUrl?: string;
  webhookIntervalMs?: number;
  clock?: () => number;
  log?: (message: string) => void;
}

export interface RunningMock {
  url: string;
  port: number;
  keys: Record<Tier, string>;
  prism: RunningPrism;
  stream: MockStream;
  server: Server;
  /** The webhook sender, when started with `webhookUrl`. */
  webhooks?: MockWebhooks;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Prism, then REST, stream and webhooks on one loopback port; bad options refused first, a failed listen stops all. */
export async function startMock(opts: MockOptions = {}): Promise<RunningMock> {
  const host = opts.host ?? '127.0.0.1';
  const streamIntervalMs = opts.streamIntervalMs ?? 2000;
  checkOptions(host, streamIntervalMs);
  const log = opts.log ?? (() => {});
  const clock = opts.clock ?? Date.now;
  const prism = await startContractPrism(opts, log);
  const testPrefix = opts.testPrefix ?? limits.keyPrefixes.test;
  const accounts = new SandboxAccounts(clock, testPrefix);
  const auth: AuthDeps = { accounts, ipGuard: openIpGuard, livePrefix: testPrefix };
  const rest = createMockApp({
    prismUrl: prism.url,
    accounts,
    auth,
    rateLimiter: new AdmitAllRateLimiter(),
    clock,
    validateResponses: opts.validateResponses ?? false,
  });
  const server = await serveRest(rest, prism, opts.port ?? 4010, host);
  const stream = attachMockStream(server, {
    auth,
    examples: exampleArticles(streamExamples),
    intervalMs: streamIntervalMs,
    clock,
    log,
    ...(opts.streamHistory !== undefined ? { historyLimit: opts.streamHistory } : {}),
  });
  const webhooks = opts.webhookUrl ? startSampleWebhooks(opts.webhookUrl, opts, clock, log) : undefined;
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    keys: accounts.keys,
    prism,
    stream,
    server,
    ...(webhooks ? { webhooks } : {}),
    close: closeOnce({ webhooks, stream, server, rest, prism }),
  };
}

function checkOptions(host: string, streamIntervalMs: number): void {
  if (!LOOPBACK.test(host)) throw new Error(`the mock listens on loopback only, got host "${host}"`);
  if (!Number.isInteger(streamIntervalMs) || streamIntervalMs < 10)
    throw new Error(`streamIntervalMs must be an integer ≥ 10, got ${streamIntervalMs}`);
}

async function startContractPrism(opts: MockOptions, log: (message: string) => void): Promise<RunningPrism> {
  const specPath = opts.specPath ?? openapiPath;
  log(`starting Prism on ${specPath} …`);
  const prism = await startPrism({ specPath, ...(opts.prismEnv ? { env: opts.prismEnv } : {}), log });
  log(`Prism is serving the REST contract on ${prism.url} (internal)`);
  return prism;
}

type MockRest = ReturnType<typeof createMockApp>;

/** The REST front listening on `port` of `host`; if it cannot, the front and Prism are stopped and the error thrown. */
async function serveRest(rest: MockRest, prism: RunningPrism, port: number, host: string): Promise<Server> {
  const server = createHttpServer(rest.app);
  server.keepAliveTimeout = 65_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    rest.close();
    await prism.stop();
    throw err;
  }
  return server;
}

function startSampleWebhooks(
  url: string,
  opts: MockOptions,
  clock: () => number,
  log: (message: string) => void,
): MockWebhooks {
  return startMockWebhooks({
    url,
    intervalMs: opts.webhookIntervalMs ?? 5000,
    examples: exampleArticles(streamExamples),
    clock,
    log,
  });
}

/** Webhooks, stream, server (connections cut), REST front, then Prism; runs once, each call gets the same promise. */
function closeOnce(parts: {
  webhooks: MockWebhooks | undefined;
  stream: MockStream;
  server: Server;
  rest: MockRest;
  prism: RunningPrism;
}): () => Promise<void> {
  const { webhooks, stream, server, rest, prism } = parts;
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      await webhooks?.close();
      await stream.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rest.close();
      await prism.stop();
    })();
    return closing;
  };
}

/**
 * The two targets of the parity suite: the partner mock (sandbox keys) and the real service (a temp
 * DATA_DIR, keys made with the operator's `createKey`, articles ingested through its store). The suite
 * talks to both only over HTTP and WebSocket, the way a partner's client does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/openapi.js';
import { createKey } from '../../src/cli/operator.js';
import { loadConfig } from '../../src/config/index.js';
import { startMock } from '../../src/mock/index.js';
import { livePrefix, startService } from '../../src/server/index.js';
import type { NewArticle } from '../../src/store/ports/index.js';
import { TrigramEmbedder } from '../support/service.js';
import { loopbackFetch, nextLoopbackAddress } from './loopback-fetch.js';

export type PaidTier = 'starter' | 'pro' | 'max';

export interface ParityTarget {
  name: 'mock' | 'real';
  baseUrl: string;
  /** One key per tier. */
  keys: Record<PaidTier, string>;
  /** A key of that tier that nothing has used yet (real: a new account; mock: the tier's sandbox key). */
  newKey(tier: PaidTier): Promise<string>;
  /** Well-formed for this target's environment but issued to nobody. */
  unknownKey: string;
  /** A key of the other environment (`fns_live_…` for the mock, `fns_test_…` for the service). */
  foreignKey: string;
  /**
   * Makes a new article arrive for the stream. The real service: ingested through its store. The mock
   * pushes an article every `MOCK_STREAM_INTERVAL_MS` on its own, so there is nothing to do.
   */
  arrive(): Promise<void>;
  close(): Promise<void>;
}

/** The typed client generated from openapi.yaml, sending from its own loopback address. */
export function clientOf(target: Pick<ParityTarget, 'baseUrl'>, key?: string): Client<paths> {
  return createClient<paths>({
    baseUrl: target.baseUrl,
    fetch: loopbackFetch(nextLoopbackAddress()),
    ...(key !== undefined ? { headers: { 'X-API-Key': key } } : {}),
  });
}

export const MOCK_STREAM_INTERVAL_MS = 200;

export async function startMockTarget(): Promise<ParityTarget> {
  const mock = await startMock({
    port: 0,
    host: '127.0.0.1',
    streamIntervalMs: MOCK_STREAM_INTERVAL_MS,
    validateResponses: true,
  });
  return {
    name: 'mock',
    baseUrl: mock.url,
    keys: { starter: mock.keys.starter, pro: mock.keys.pro, max: mock.keys.max },
    newKey: async (tier) => mock.keys[tier],
    unknownKey: 'fns_test_nobody',
    foreignKey: 'fns_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    arrive: async () => {},
    close: () => mock.close(),
  };
}

const H = 3600_000;

/** What the real service holds before the suite runs: two arrivals, a second apart, of the contract's example news. */
const seed: { at: number; articles: NewArticle[] }[] = [
  {
    at: -2000,
    articles: [
      {
        content: 'Treasury yields climb as traders price in a slower pace of rate cuts',
        urgency: 'regular',
        sentiment: null,
        published_at: null,
        tickers: [],
      },
      {
        content: 'Nvidia shares jump 6% after record data-center revenue beats estimates',
        urgency: 'flash',
        sentiment: 'positive',
        published_at: new Date(Date.now() - H).toISOString(),
        tickers: [
          { ticker: 'NVDA', sentiment: 'positive' },
          { ticker: 'AMD', sentiment: 'neutral' },
        ],
      },
    ],
  },
  {
    at: -1000,
    articles: [
      {
        content: 'Fed raises benchmark rate by 25 basis points, signals further tightening',
        urgency: 'breaking',
        sentiment: 'hawkish',
        published_at: new Date(Date.now() - 5000).toISOString(),
        tickers: [
          { ticker: 'JPM', sentiment: 'positive' },
          { ticker: 'SPY', sentiment: 'neutral' },
        ],
      },
    ],
  },
];

export async function startRealTarget(): Promise<ParityTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'fns-parity-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, VALIDATE_RESPONSES: 'true' });
  const svc = await startService(config, { log: () => {}, embedder: new TrigramEmbedder() });
  const prefix = livePrefix(config);
  const now = Date.now();
  for (const batch of seed) await svc.store.articles.insert(batch.articles, now + batch.at);
  await svc.worker.drain();
  const newKey = async (tier: PaidTier) =>
    (await createKey(svc.store.accounts, { tier, livePrefix: prefix, now: Date.now() })).key;
  let arrivals = 0;
  return {
    name: 'real',
    baseUrl: svc.url,
    keys: { starter: await newKey('starter'), pro: await newKey('pro'), max: await newKey('max') },
    newKey,
    unknownKey: `${prefix}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`,
    foreignKey: 'fns_test_max',
    async arrive() {
      await svc.store.articles.insert(
        [
          {
            content: `ECB's Lagarde says inflation fight is not over (${++arrivals})`,
            urgency: 'regular',
            sentiment: 'hawkish',
            published_at: null,
            tickers: [],
          },
        ],
        Date.now(),
      );
    },
    async close() {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

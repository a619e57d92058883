/**
 * Targets that make articles arrive on demand, in bursts, for the resume suites (test/parity and the
 * client's, test/sdk): the mock (its pushes) and the real service (its store, then a wake-up).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKey } from '../../src/cli/operator.js';
import { loadConfig } from '../../src/config/index.js';
import { streamAddress, type TickerSentiment } from '../../src/contract/index.js';
import { startMock } from '../../src/mock/index.js';
import { livePrefix, startService } from '../../src/server/index.js';
import { TrigramEmbedder } from '../support/service.js';

export interface Target {
  name: string;
  wsUrl: string;
  keys: { pro: string; max: string };
  /** Makes `n` articles arrive now (in chunks, letting clients read in between); their ids in order. */
  burst(n: number): Promise<string[]>;
  /** Which of `ids` are about `ticker` (what the target pushed). */
  about(ticker: string): (id: string) => boolean;
  /** A ticker that some of the target's articles carry. */
  ticker: string;
  close(): Promise<void>;
}

const CHUNK = 100;
const yieldToIo = () => new Promise<void>((r) => setImmediate(r));

export async function mockTarget(): Promise<Target> {
  // No timer pushes during the suite: articles arrive only when the test makes them.
  const mock = await startMock({ port: 0, host: '127.0.0.1', streamIntervalMs: 3_600_000 });
  const tickersOf = new Map<string, TickerSentiment[]>();
  return {
    name: 'mock',
    wsUrl: `${mock.url.replace('http', 'ws')}${streamAddress}`,
    keys: { pro: mock.keys.pro, max: mock.keys.max },
    async burst(n) {
      const ids: string[] = [];
      while (ids.length < n) {
        for (let i = 0; i < CHUNK && ids.length < n; i++) {
          const a = mock.stream.pushNext();
          tickersOf.set(a.id, a.tickers ?? []);
          ids.push(a.id);
        }
        await yieldToIo();
      }
      return ids;
    },
    about: (ticker) => (id) => (tickersOf.get(id) ?? []).some((t) => t.ticker === ticker),
    ticker: 'NVDA', // asyncapi.yaml's maxClient example
    close: () => mock.close(),
  };
}

export async function realTarget(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'fns-resume-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir });
  const svc = await startService(config, { log: () => {}, embedder: new TrigramEmbedder(), pollSources: false });
  const prefix = livePrefix(config);
  const key = async (tier: 'pro' | 'max') =>
    (await createKey(svc.store.accounts, { tier, livePrefix: prefix, now: Date.now() })).key;
  const tickersOf = new Map<string, TickerSentiment[]>();
  let n0 = 0;
  return {
    name: 'real',
    wsUrl: `${svc.url.replace('http', 'ws')}${streamAddress}`,
    keys: { pro: await key('pro'), max: await key('max') },
    async burst(n) {
      const ids: string[] = [];
      while (ids.length < n) {
        const batch = Array.from({ length: Math.min(CHUNK, n - ids.length) }, () => {
          const i = n0++;
          const tickers: TickerSentiment[] =
            i % 3 === 0 ? [{ ticker: 'AAPL', sentiment: 'neutral', relevance: 1 }] : [];
          return {
            content: `Burst article ${i}`,
            urgency: 'regular' as const,
            sentiment: null,
            published_at: null,
            tickers,
          };
        });
        for (const a of await svc.store.articles.insert(batch, Date.now)) {
          tickersOf.set(a.id, a.tickers);
          ids.push(a.id);
        }
        svc.stream.wake();
        await yieldToIo();
      }
      return ids;
    },
    about: (ticker) => (id) => (tickersOf.get(id) ?? []).some((t) => t.ticker === ticker),
    ticker: 'AAPL',
    async close() {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The random drop points are reproducible: a seeded generator. */
export { prng as rng } from '../../scripts/lib/random.js';

/**
 * `npx tsx scripts/bench-mock.ts [--seconds 10] [--connections 10]`: GET /v1/news under load with
 * autocannon, against the partner mock (front + Prism child) and against the real service, in the same
 * run, with the same duration and connections; prints req/s and p99 for both and their ratio.
 *
 * The real service is built with createApp() as in production (auth, IP guard, validation, SQLite,
 * JSON; 50 articles per response, a max key) except for the rate limiter: a max key is admitted 60
 * times a minute, so the bench uses AdmitAllRateLimiter (it still sets the rate-limit
 * headers). autocannon runs in a child process so it does not share the servers' event loop.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { createKey } from '../src/cli/operator.js';
import { limits } from '../src/contract/index.js';
import { createApp } from '../src/http/app.js';
import { benchAppDeps } from './lib/bench-app.js';
import { SemanticIndex } from '../src/indexing/index.js';
import { startMock, type RunningMock } from '../src/mock/index.js';
import type { NewArticle } from '../src/store/ports/index.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { TrigramEmbedder } from '../test/support/service.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const autocannon = join(root, 'node_modules', '.bin', 'autocannon');
const run = promisify(execFile);

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '10' } },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
if (!Number.isInteger(SECONDS) || SECONDS < 1 || SECONDS > 120)
  throw new Error('--seconds must be an integer between 1 and 120');
if (!Number.isInteger(CONNECTIONS) || CONNECTIONS < 1 || CONNECTIONS > 1000)
  throw new Error('--connections must be an integer between 1 and 1000');
const PATH = '/v1/news?limit=50';

const log = (m: string) => console.log(`bench:mock: ${m}`);

interface Result {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, key: string, seconds: number, connections: number): Promise<Result> {
  const { stdout } = await run(
    autocannon,
    ['-j', '-c', String(connections), '-d', String(seconds), '-H', `X-API-Key=${key}`, url],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const r = JSON.parse(stdout);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

async function probe(url: string, key: string): Promise<{ count: number; bytes: number }> {
  const res = await fetch(url, { headers: { 'X-API-Key': key } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`probe of ${url} failed: ${res.status} ${text.slice(0, 200)}`);
  return { count: JSON.parse(text).count, bytes: Buffer.byteLength(text) };
}

async function main(): Promise<void> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'fns-bench-mock-'));
  const store = new SqliteStore(join(dir, 'fns.sqlite'));
  let mock: RunningMock | undefined;
  let service: Server | undefined;
  try {
    log('starting the mock (Prism child + front) …');
    mock = await startMock({ port: 0, log: (m) => log(`  ${m}`) });

    log('starting the real service (createApp, SQLite, rate limiter replaced by one that admits every request) …');
    const now = Date.now();
    const urgencies = ['regular', 'regular', 'flash', 'breaking'] as const;
    const articles: NewArticle[] = Array.from({ length: 60 }, (_, i) => ({
      content: `Headline ${i}: markets move on central bank remarks and earnings`,
      urgency: urgencies[i % urgencies.length]!,
      sentiment: i % 3 === 0 ? 'positive' : null,
      published_at: null,
      tickers: i % 2 === 0 ? [{ ticker: 'SPY', sentiment: 'neutral' }] : [],
    }));
    await store.articles.insert(articles, now - 60_000);
    const realKey = (await createKey(store.accounts, { tier: 'max', livePrefix: limits.keyPrefixes.live, now })).key;
    const app = createApp(benchAppDeps(store, new SemanticIndex(store, new TrigramEmbedder())));
    service = createServer(app);
    await new Promise<void>((r) => service!.listen(0, '127.0.0.1', r));
    const realUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}${PATH}`;
    const mockUrl = `${mock.url}${PATH}`;

    const mp = await probe(mockUrl, mock.keys.max);
    const rp = await probe(realUrl, realKey);
    if (rp.count !== 50) throw new Error(`the real service returned ${rp.count} articles, expected 50`);
    log(
      `mock answers ${mp.count} articles (${mp.bytes} bytes: the contract's example); real service ${rp.count} articles (${rp.bytes} bytes)`,
    );
    log(`${CONNECTIONS} connections, ${SECONDS} s each, GET ${PATH}, autocannon in a child process`);

    log('warming up (2 s each) …');
    await load(mockUrl, mock.keys.max, 2, 4);
    await load(realUrl, realKey, 2, 4);
    log(`mock (${SECONDS} s) …`);
    const m = await load(mockUrl, mock.keys.max, SECONDS, CONNECTIONS);
    log(`real service (${SECONDS} s) …`);
    const r = await load(realUrl, realKey, SECONDS, CONNECTIONS);
    for (const [name, x] of [
      ['mock', m],
      ['real service', r],
    ] as const) {
      if (x.non2xx > 0 || x.errors > 0)
        throw new Error(`${name}: ${x.non2xx} non-2xx responses and ${x.errors} errors during the bench`);
    }

    console.log('\n| target | articles per response | req/s | p50 ms | p99 ms |');
    console.log('|---|---|---|---|---|');
    console.log(`| mock (front + Prism, fns_test_max) | ${mp.count} | ${m.rps.toFixed(0)} | ${m.p50} | ${m.p99} |`);
    console.log(
      `| real service (createApp, admit-all rate limiter, max key) | ${rp.count} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} |`,
    );
    console.log(
      `\nmock/real throughput ratio: ${(m.rps / r.rps).toFixed(2)}; p99 ratio: ${(m.p99 / Math.max(r.p99, 1)).toFixed(2)}x`,
    );
    console.log('note: the real service was measured with its rate limiter replaced by one that admits every request;');
    console.log('      with the real limiter a max key gets 60 requests a minute and the rest are 429.');
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    if (service) {
      service.closeAllConnections();
      await new Promise((r) => service!.close(r));
    }
    await mock?.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

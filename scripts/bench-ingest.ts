/**
 * Ingestion benchmark (issue 11): the real service (`startService`, SQLite in a temp DATA_DIR, its own
 * source poller) polling feeds from a loopback feed server, and one stream client (a pro key).
 *
 *   npx tsx scripts/bench-ingest.ts [--feeds=20] [--items=500] [--latency-s=45] [--every-s=1]
 *
 * 1. Throughput: `feeds` RSS feeds of `items` distinct headlines each are registered at once; the clock
 *    runs until the stream client has received every stored article. Items/s = items read from the
 *    feeds / that time, i.e. through fetch, parse, enrichment, near-duplicate keys, dedup, store (one
 *    transaction per poll) and publish to the stream. Goal >= 5,000/s on 2 cores.
 * 2. Latency: two sources polled every `every-s`; a new item is published at a random moment roughly
 *    twice a second, alternately on each feed; per item, publish (added to the feed) -> received by the
 *    stream client. Goal p99 <= one poll interval + 50 ms.
 *
 * Everything (service, feed server, client) runs in this one process: the figures include their
 * competition for the CPU. Embeddings are a constant stub (the embedding worker is not what this measures).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createKey } from '../src/cli/operator.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/ops/logger.js';
import type { Embedder } from '../src/search/index.js';
import { livePrefix, startService } from '../src/server/index.js';

const arg = (name: string, dflt: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : dflt;
};
const FEEDS = arg('feeds', 20);
const ITEMS = arg('items', 500);
const LATENCY_S = arg('latency-s', 45);
const EVERY_MS = arg('every-s', 1) * 1000;
const GOAL_RATE = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A constant unit vector: the worker stores something, cheaply. */
const stubEmbedder: Embedder = {
  modelId: 'bench:constant',
  async embed(texts) {
    return texts.map(() => {
      const v = new Float32Array(384);
      v[0] = 1;
      return v;
    });
  },
};

// Distinct headlines: a company (sometimes a cashtag or exchange symbol), a verb phrase, a figure, and
// words made up per item (a pseudo-random generator, fixed seed), so that no two are near-duplicates.
const COMPANIES = ['Apple', 'Microsoft', 'Nvidia', 'Amazon', 'Tesla', 'JPMorgan', 'Boeing', 'Pfizer', 'Exxon', 'Walmart', 'Intel', 'Netflix', 'Shell', 'Visa', 'Oracle'];
const TICKERS = ['$AAPL', '$MSFT', 'NASDAQ:NVDA', '(NYSE: IBM)', '$TSLA', '$JPM'];
const VERBS = ['shares rise', 'shares fall', 'beats estimates', 'misses forecasts', 'raises guidance', 'cuts outlook', 'announces buyback', 'faces probe', 'wins contract', 'plans layoffs'];
const SYLLABLES = ['ka', 'lo', 'mi', 'ru', 'te', 'vo', 'zan', 'pel', 'dor', 'fis', 'gru', 'hem', 'jun', 'bri', 'sto', 'wex', 'qua', 'nim', 'osh', 'ple'];
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const word = () => Array.from({ length: 2 + Math.floor(random() * 2) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join('');
function headline(n: number): string {
  const who = n % 5 === 0 ? TICKERS[n % TICKERS.length]! : COMPANIES[n % COMPANIES.length]!;
  const prefix = n % 50 === 0 ? 'BREAKING: ' : '';
  const words = Array.from({ length: 6 }, word).join(' ');
  return `${prefix}${who} ${VERBS[n % VERBS.length]} ${(n % 97) / 10 + 0.1}% as ${words}`;
}

interface Item {
  guid: string;
  title: string;
  link: string;
}
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const rss = (items: Item[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>bench</title><link>http://example.com/</link>${items
    .map((i) => `<item><title>${esc(i.title)}</title><link>${esc(i.link)}</link><guid isPermaLink="false">${i.guid}</guid></item>`)
    .join('')}</channel></rss>`;

/** Feeds served from memory, each with an ETag that changes with its content (unchanged polls get 304). */
async function feedServer() {
  const feeds = new Map<string, { items: Item[]; version: number; body?: string }>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const feed = feeds.get(req.url ?? '');
    if (!feed) return void res.writeHead(404).end();
    const etag = `"${feed.version}"`;
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
    feed.body ??= rss(feed.items);
    res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8', etag }).end(feed.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path: string) => base + path,
    set(path: string, items: Item[]) {
      const f = feeds.get(path);
      feeds.set(path, { items, version: (f?.version ?? 0) + 1 });
    },
    add(path: string, item: Item) {
      const f = feeds.get(path)!;
      f.items = [item, ...f.items].slice(0, 50);
      f.version++;
      f.body = undefined;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fns-bench-ingest-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
  const logger = createLogger({ destination: { write: () => {} } });
  const svc = await startService(config, { embedder: stubEmbedder, logger });
  const feeds = await feedServer();
  const key = (await createKey(svc.store, { tier: 'pro', livePrefix: livePrefix(config), now: Date.now() })).key;
  const received = new Map<string, number>();
  const ws = new WebSocket(`${svc.url.replace(/^http/, 'ws')}/v1/stream?api_key=${key}`);
  ws.on('message', (m) => received.set(JSON.parse(m.toString()).content, performance.timeOrigin + performance.now()));
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  console.log(`bench:ingest on ${cpus().length} CPU(s), Node ${process.version}, SQLite in ${dataDir}`);

  try {
    // 1. Throughput.
    let n = 0;
    for (let f = 0; f < FEEDS; f++) {
      const items: Item[] = [];
      for (let i = 0; i < ITEMS; i++, n++) items.push({ guid: `bench-${n}`, title: headline(n), link: `https://example.com/bench/${n}?utm_source=bench` });
      feeds.set(`/t${f}.rss`, items);
    }
    const total = FEEDS * ITEMS;
    const t0 = performance.now();
    for (let f = 0; f < FEEDS; f++) await svc.store.addSource({ name: `t${f}`, url: feeds.url(`/t${f}.rss`), everyMs: 3600_000, urgency: 'auto' }, Date.now());
    svc.poller!.wake();
    const seen = async () => (await svc.store.listSources()).reduce((s, x) => s + x.itemsSeen, 0);
    while ((await seen()) < total) await sleep(5);
    const stored = (await svc.store.listSources()).reduce((s, x) => s + x.itemsIngested, 0);
    while (received.size < stored) await sleep(2);
    const secs = (performance.now() - t0) / 1000;
    const rate = Math.round(total / secs);
    const dedup = (await svc.store.listSources()).reduce((s, x) => s + x.itemsDeduplicated, 0);
    console.log(`\n1. throughput: ${total.toLocaleString('en-US')} items from ${FEEDS} feeds of ${ITEMS} (fetch, parse, enrich, dedup, store, publish) in ${secs.toFixed(2)} s`);
    console.log(`   ${rate.toLocaleString('en-US')} items/s   goal >= ${GOAL_RATE.toLocaleString('en-US')}/s: ${rate >= GOAL_RATE ? 'met' : 'NOT met'} (x${(rate / GOAL_RATE).toFixed(2)})`);
    console.log(`   stored ${stored.toLocaleString('en-US')}, deduplicated ${dedup}, received by the stream client ${received.size.toLocaleString('en-US')}`);
    for (let f = 0; f < FEEDS; f++) await svc.store.removeSource(`t${f}`);

    // 2. Latency: publish -> stream client.
    feeds.set('/a.rss', []);
    feeds.set('/b.rss', []);
    await svc.store.addSource({ name: 'lat-a', url: feeds.url('/a.rss'), everyMs: EVERY_MS, urgency: 'auto' }, Date.now());
    await svc.store.addSource({ name: 'lat-b', url: feeds.url('/b.rss'), everyMs: EVERY_MS, urgency: 'auto' }, Date.now());
    await sleep(1500);
    const published = new Map<string, number>();
    const end = performance.now() + LATENCY_S * 1000;
    let k = 0;
    while (performance.now() < end) {
      await sleep(Math.random() * 1000);
      const title = `${headline(1_000_000 + k)} (latency ${k})`;
      published.set(title, performance.timeOrigin + performance.now());
      feeds.add(k % 2 === 0 ? '/a.rss' : '/b.rss', { guid: `lat-${k}`, title, link: `https://example.com/lat/${k}` });
      k++;
    }
    await sleep(EVERY_MS + 1000);
    const lat = [...published].map(([t, at]) => (received.has(t) ? received.get(t)! - at : Number.POSITIVE_INFINITY)).sort((a, b) => a - b);
    const missing = lat.filter((x) => !Number.isFinite(x)).length;
    const goal = EVERY_MS + 50;
    const p99 = pct(lat, 99);
    console.log(`\n2. latency, publish -> stream client, ${lat.length} items on 2 sources polled every ${EVERY_MS / 1000} s (${missing} never arrived)`);
    console.log(`   p50 ${pct(lat, 50).toFixed(0)} ms   p90 ${pct(lat, 90).toFixed(0)} ms   p99 ${p99.toFixed(0)} ms   max ${lat.at(-1)!.toFixed(0)} ms`);
    console.log(`   goal p99 <= poll interval + 50 ms = ${goal} ms: ${p99 <= goal ? 'met' : 'NOT met'} (p99 / goal = ${(p99 / goal).toFixed(2)})`);
  } finally {
    ws.close();
    await svc.close();
    await feeds.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();

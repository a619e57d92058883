/**
 * Ingestion benchmark (issue 11): the real service (`startService`, SQLite in a temp DATA_DIR, its own
 * source poller) polling feeds from a loopback feed server, and one stream client (a pro key).
 *
 *   npx tsx scripts/bench-ingest.ts [--feeds=10] [--items=200] [--latency-s=45] [--every-s=1]
 *
 * 2. Throughput: `feeds` RSS feeds of `items` distinct headlines each are registered at once; the clock
 *    runs until the stream client has received every stored article. Items/s = items read from the
 *    feeds / that time, i.e. through fetch, parse, enrichment, near-duplicate keys, dedup, store (one
 *    transaction per poll) and publish to the stream. Goal >= 5,000/s on 2 cores.
 * 1. Latency (first): two sources polled every `every-s`; a new item is published at a random moment roughly
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
import { parseFeed, toSourcedItems } from '../src/sources/index.js';
import { SqliteStore } from '../src/store/sqlite.js';

const arg = (name: string, dflt: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : dflt;
};
const FEEDS = arg('feeds', 10);
const ITEMS = arg('items', 200);
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
// Real words (a made-up vocabulary would be read differently by the normaliser of src/dedup).
const VOCABULARY = (
  'harbor copper lithium pipeline refinery tariff merger lawsuit pension dividend bond yield inflation payroll factory ' +
  'retail freight shipping airline vaccine trial patent chip memory battery solar wind nuclear grid drought harvest ' +
  'wheat coffee sugar cocoa cattle timber steel aluminum nickel zinc cobalt uranium brewer insurer lender broker ' +
  'regulator senator governor mayor union strike recall probe audit filing rating upgrade downgrade spinoff stake ' +
  'takeover auction offering buyback tender charter contract license subsidy rebate levy quota embargo sanction ' +
  'forecast outlook margin revenue backlog inventory orders shipments deliveries bookings subscribers visitors ' +
  'mortgage deposit loan credit default rescue bailout settlement verdict appeal hearing ruling ' +
  'Texas Ohio Nevada Brazil Chile Peru Norway Poland Kenya Vietnam Korea Japan India Mexico Canada Sweden Spain Italy ' +
  'northern southern coastal rural offshore onshore regional national quarterly annual weekly record surprise ' +
  'delayed expanded reduced stalled revived blocked approved rejected cleared unveiled'
).split(' ');
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const word = () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
function headline(n: number): string {
  const who = random() < 0.2 ? pick(TICKERS) : pick(COMPANIES);
  const prefix = n % 50 === 0 ? 'BREAKING: ' : '';
  const words = Array.from({ length: 6 }, word).join(' ');
  return `${prefix}${who} ${pick(VERBS)} ${(random() * 20).toFixed(1)}% as ${words}`;
}

/** A headline sharing no template with the others (the latency items must not be near-duplicates). */
const uniqueHeadline = () => Array.from({ length: 9 }, word).join(' ');

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
  // The service ends a client whose send buffer overflows (slow consumer): say so instead of waiting.
  let closed: string | null = null;
  ws.on('close', (code, reason) => (closed = `${code} ${reason.toString()}`));
  console.log(`bench:ingest on ${cpus().length} CPU(s), Node ${process.version}, SQLite in ${dataDir}`);

  try {
    // 1. Latency: publish -> stream client (first, so no item is a near-duplicate of the throughput items).
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
      const title = `${uniqueHeadline()} ${k}`;
      published.set(title, performance.timeOrigin + performance.now());
      feeds.add(k % 2 === 0 ? '/a.rss' : '/b.rss', { guid: `lat-${k}`, title, link: `https://example.com/lat/${k}` });
      k++;
    }
    await sleep(EVERY_MS + 1000);
    const lat = [...published].map(([t, at]) => (received.has(t) ? received.get(t)! - at : Number.POSITIVE_INFINITY)).sort((a, b) => a - b);
    const missing = lat.filter((x) => !Number.isFinite(x)).length;
    if (process.env.BENCH_DEBUG) {
      const archived = new Set((await svc.store.list({ afterMs: 0, limit: 100000 })).map((x) => x.content));
      for (const [t] of published) if (!received.has(t)) console.log('missing:', JSON.stringify(t), 'stored:', archived.has(t));
    }
    const goal = EVERY_MS + 50;
    const p99 = pct(lat, 99);
    console.log(`\n1. latency, publish -> stream client, ${lat.length} items on 2 sources polled every ${EVERY_MS / 1000} s (${missing} never arrived)`);
    console.log(`   p50 ${pct(lat, 50).toFixed(0)} ms   p90 ${pct(lat, 90).toFixed(0)} ms   p99 ${p99.toFixed(0)} ms   max ${lat.at(-1)!.toFixed(0)} ms`);
    console.log(`   goal p99 <= poll interval + 50 ms = ${goal} ms: ${p99 <= goal ? 'met' : 'NOT met'} (p99 / goal = ${(p99 / goal).toFixed(2)})`);
    await svc.store.removeSource('lat-a');
    await svc.store.removeSource('lat-b');

    // 2. Throughput.
    let n = 0;
    for (let f = 0; f < FEEDS; f++) {
      const items: Item[] = [];
      for (let i = 0; i < ITEMS; i++, n++) items.push({ guid: `bench-${n}`, title: headline(n), link: `https://example.com/bench/${n}?utm_source=bench` });
      feeds.set(`/t${f}.rss`, items);
    }
    const total = FEEDS * ITEMS;
    const before = received.size;
    const t0 = performance.now();
    for (let f = 0; f < FEEDS; f++) await svc.store.addSource({ name: `t${f}`, url: feeds.url(`/t${f}.rss`), everyMs: 5_000, urgency: 'auto' }, Date.now());
    svc.poller!.wake();
    const seen = async () => (await svc.store.listSources()).reduce((s, x) => s + x.itemsSeen, 0);
    const deadline = performance.now() + 100_000;
    while ((await seen()) < total) {
      if (performance.now() > deadline) {
        const failing = (await svc.store.listSources()).filter((x) => x.lastError !== null).map((x) => `${x.name}: ${x.lastError}`);
        throw new Error(`not every item was read within 100 s (${await seen()} of ${total}); ${failing.join('; ') || 'no source failing'}`);
      }
      await sleep(5);
    }
    const readAt = performance.now();
    const stored = (await svc.store.listSources()).reduce((s, x) => s + x.itemsIngested, 0);
    while (received.size - before < stored) {
      if (closed !== null) throw new Error(`the stream client was closed by the service (${closed}) after receiving ${received.size - before} of ${stored} stored articles`);
      if (performance.now() > deadline) throw new Error(`the stream client received ${received.size - before} of ${stored} stored articles within 100 s`);
      await sleep(2);
    }
    const doneAt = performance.now();
    const secs = (doneAt - t0) / 1000;
    const rate = Math.round(total / secs);
    const dedup = (await svc.store.listSources()).reduce((s, x) => s + x.itemsDeduplicated, 0);
    console.log(`\n2. throughput: ${total.toLocaleString('en-US')} items from ${FEEDS} feeds of ${ITEMS} (fetch, parse, enrich, dedup, store, publish) in ${secs.toFixed(2)} s`);
    console.log(`   ${rate.toLocaleString('en-US')} items/s   goal >= ${GOAL_RATE.toLocaleString('en-US')}/s: ${rate >= GOAL_RATE ? 'met' : 'NOT met'} (x${(rate / GOAL_RATE).toFixed(2)})`);
    console.log(`   every item read and ingested after ${((readAt - t0) / 1000).toFixed(2)} s (${Math.round(total / ((readAt - t0) / 1000)).toLocaleString('en-US')} items/s), the last one on the stream ${((doneAt - readAt) / 1000).toFixed(2)} s later`);
    console.log(`   stored ${stored.toLocaleString('en-US')}, deduplicated ${dedup}, received by the stream client ${(received.size - before).toLocaleString('en-US')} (near-duplicates of these made-up headlines: the store's decision)`);
    for (let f = 0; f < FEEDS; f++) await svc.store.removeSource(`t${f}`);


    // 3. Where the time goes: each stage alone on fresh items (a fresh SQLite file per store variant).
    console.log(`\n3. stages alone, ${FEEDS} feeds of ${ITEMS} fresh items, one after the other (microseconds per item):`);
    const stage = { parse: 0, map: 0, ingest: 0, ingestNoNear: 0 };
    const withNear = new SqliteStore(join(dataDir, 'stages-near.sqlite'));
    const noNear = new SqliteStore(join(dataDir, 'stages-exact.sqlite'));
    for (let f = 0; f < FEEDS; f++) {
      const items: Item[] = [];
      for (let i = 0; i < ITEMS; i++, n++) items.push({ guid: `stage-${n}`, title: headline(n), link: `https://example.com/stage/${n}` });
      const body = new TextEncoder().encode(rss(items));
      let t = performance.now();
      const parsed = parseFeed(body, { contentType: 'application/rss+xml', baseUrl: 'http://127.0.0.1/' });
      stage.parse += performance.now() - t;
      t = performance.now();
      const sourced = toSourcedItems({ name: 'stage', urgency: 'auto' }, parsed.items);
      stage.map += performance.now() - t;
      t = performance.now();
      await withNear.ingestItems(sourced, Date.now);
      stage.ingest += performance.now() - t;
      const exact = sourced.map((x) => ({ ...x, nearKeys: [] }));
      t = performance.now();
      await noNear.ingestItems(exact, Date.now);
      stage.ingestNoNear += performance.now() - t;
    }
    await withNear.close();
    await noNear.close();
    const us = (ms: number) => ((ms * 1000) / total).toFixed(0).padStart(6);
    console.log(`   parseFeed                                      ${us(stage.parse)}`);
    console.log(`   toSourcedItems (enrich, identity: link, keys)  ${us(stage.map)}`);
    console.log(`   ingestItems (exact + near dedup, insert)       ${us(stage.ingest)}`);
    console.log(`   ingestItems without near keys (exact only)     ${us(stage.ingestNoNear)}`);
    console.log(`   5,000 items/s is ${(1e6 / GOAL_RATE).toFixed(0)} us per item for everything, on one event loop`);
  } finally {
    ws.close();
    await svc.close();
    await feeds.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();

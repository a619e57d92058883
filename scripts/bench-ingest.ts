/**
 * Ingestion benchmark: the real service (`startService`, SQLite in a temp DATA_DIR or, with
 * --database-url, PostgreSQL in a schema of its own; its own source poller) polling feeds from a loopback
 * feed server, and one stream client (a pro key).
 *
 *   npm run bench:ingest -- [--feeds=10] [--items=200] [--latency-s=45] [--every-s=1]
 *
 * 2. Throughput: `feeds` RSS feeds of `items` distinct headlines each are registered at once; the clock
 *    runs until the stream client has received every stored article. Items/s = items read from the
 *    feeds / that time, i.e. through fetch, parse, enrichment, near-duplicate keys, dedup, store (one
 *    transaction per poll) and publish to the stream. Goal >= 5,000/s on 2 cores.
 * 1. Latency (first): two sources polled every `every-s`; a new item is published at a random moment roughly
 *    twice a second, alternately on each feed; per item, publish (added to the feed) -> received by the
 *    stream client. Goal p99 <= one poll interval + 50 ms.
 *
 * 4. Event-loop blocks: the longest time the service's event loop was held at once while it
 *    polls one feed of 1,000 items, then one of 5,000 (~4.5 MB), and while it takes a push of 1,000
 *    articles (~1 MiB) on the admin listener; goal <= 10 ms each. The time per item of the two polls
 *    (registration to recorded) shows whether the cost per item grows with the feed (goal: flat). The
 *    floor, in the same run: the same probe around one plain `JSON.parse` of that push body (as a JSON
 *    array), the least any reading of the body costs at once.
 *    Probe: perf_hooks monitorEventLoopDelay, resolution 1 ms (its max is the longest delay of a 1 ms
 *    timer, i.e. the longest block, to about 1 ms; GC pauses count too; its p99 is printed too). Next to
 *    it, the loop's own CPU: the most CPU time the event-loop thread used between two ticks of a 1 ms
 *    timer (process.threadCpuUsage). On a machine shared with other busy processes a block is also the
 *    time the thread waited for a core; the CPU figure is the part that is the service's own work.
 *    Items/s: items of the feed (articles of the push) / the time from registration (request) to the end.
 *
 *   npm run bench:ingest -- --only=blocks     (section 4 alone, about 20 s)
 *   npm run bench:ingest -- --only=blocks --database-url=postgres://127.0.0.1:5432/test   (on PostgreSQL)
 *
 * 5. Responsiveness during an ingest: what a client feels while the service polls one feed of 5,000 items,
 *    then while it takes a push of 1,000 articles (~1 MiB) on the admin listener, as in section 4. From
 *    just before the ingest starts to its end (the poll recorded, the push answered), two probers:
 *    - REST: GET /v1/news?limit=1 one after another, the next ~10 ms after the previous answer; the latency
 *      of each 200 (a 429 or any other answer is counted apart, never as an answer). No plan admits that
 *      rate: max-tier keys are rotated as each is spent, each sent from a loopback address of its own
 *      (127.0.x.y, all of 127.0.0.0/8 is loopback on Linux), so neither the rate limit nor the IP guard
 *      answers instead of the service.
 *    - Stream: one small distinct article pushed every 100 ms, each its own push on the admin listener; per
 *      article, the time from just before its push is sent to its arrival at the stream client (matched by
 *      a token at the start of its content; one clock on every thread, performance.timeOrigin +
 *      performance.now()). A probe still on its way at the end is waited for (10 s at most).
 *    Printed per engine: the ingest's items/s (as in section 4), then n, p50, p99 and max of the REST answers
 *    and of the stream deliveries. Goal: the slowest REST answer and the slowest stream delivery < 100 ms.
 *    It uses only what a client or an operator sees (REST, the stream, the push, feed polling), so it runs
 *    unchanged against a service whose ingestion works otherwise inside.
 *
 *   npm run bench:ingest -- --only=responsive     (section 5 alone, about 40 s)
 *   npm run bench:ingest -- --only=responsive --database-url=postgres://127.0.0.1:5432/test   (on PostgreSQL)
 *
 * It runs the service as `npm start` does, with V8's background threads sized to the machine
 * (--v8-pool-size=0, docs/operations.md); the heading of section 4 says how many there were.
 *
 * Everything (service, feed server, client) runs in this one process: the figures include their
 * competition for the CPU. In sections 4 and 5 the clients, the probers and the feeds' servers run on
 * worker threads of it, so the event loop measured is the service's alone. Embeddings are a constant stub
 * (the embedding worker is not what this measures).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import WebSocket from 'ws';
import { createKey } from '../src/cli/operator.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/ops/logger.js';
import type { Embedder } from '../src/search/index.js';
import { livePrefix, startService } from '../src/server/index.js';
import { parseFeed, toSourcedItems } from '../src/sources/index.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { connectionString } from '../src/store/postgres/db.js';

const arg = (name: string, dflt: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : dflt;
};
const FEEDS = arg('feeds', 10);
const ITEMS = arg('items', 200);
const LATENCY_S = arg('latency-s', 45);
const EVERY_MS = arg('every-s', 1) * 1000;
const GOAL_RATE = 5000;
const ONLY = process.argv.find((x) => x.startsWith('--only='))?.split('=')[1];
/**
 * --database-url=postgres://…: the service on PostgreSQL instead of SQLite, in a schema of its own (dropped at the
 * end).
 */
const DATABASE_URL = process.argv.find((x) => x.startsWith('--database-url='))?.slice('--database-url='.length);
const BLOCK_GOAL_MS = 10;
const ADMIN_TOKEN = 'bench-token-0123456789abcdef';
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
const COMPANIES = [
  'Apple',
  'Microsoft',
  'Nvidia',
  'Amazon',
  'Tesla',
  'JPMorgan',
  'Boeing',
  'Pfizer',
  'Exxon',
  'Walmart',
  'Intel',
  'Netflix',
  'Shell',
  'Visa',
  'Oracle',
];
const TICKERS = ['$AAPL', '$MSFT', 'NASDAQ:NVDA', '(NYSE: IBM)', '$TSLA', '$JPM'];
const VERBS = [
  'shares rise',
  'shares fall',
  'beats estimates',
  'misses forecasts',
  'raises guidance',
  'cuts outlook',
  'announces buyback',
  'faces probe',
  'wins contract',
  'plans layoffs',
];
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
const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
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
  description?: string;
}
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const rss = (items: Item[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>bench</title><link>http://example.com/</link>${items
    .map(
      (i) =>
        `<item><title>${esc(i.title)}</title><link>${esc(i.link)}</link><guid isPermaLink="false">${i.guid}</guid>${i.description === undefined ? '' : `<description>${esc(i.description)}</description><pubDate>Tue, 24 Nov 2026 10:00:00 GMT</pubDate>`}</item>`,
    )
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

/**
 * V8's background threads in this process (Linux: the threads named V8Worker): `npm start` sizes them to
 * the machine (--v8-pool-size=0), as npm run bench:ingest does; Node's default is 4.
 */
function v8BackgroundThreads(): string {
  try {
    return String(
      readdirSync('/proc/self/task').filter(
        (t) => readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim() === 'V8Worker',
      ).length,
    );
  } catch {
    return 'unknown';
  }
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fns-bench-ingest-'));
  const schema = `bench_ingest_${process.pid}`;
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ADMIN_TOKEN,
    // The bench's feeds are served on loopback.
    FEED_ALLOW_PRIVATE: 'true',
    ...(DATABASE_URL ? { DATABASE_URL, DATABASE_SCHEMA: schema } : {}),
  });
  const logger = createLogger({ destination: { write: () => {} } });
  const svc = await startService(config, { embedder: stubEmbedder, logger });
  const feeds = await feedServer();
  const newKey = async (tier: string) =>
    (await createKey(svc.store.accounts, { tier, livePrefix: livePrefix(config), now: Date.now() })).key;
  const key = await newKey('pro');
  const received = new Map<string, number>();
  const ws = new WebSocket(`${svc.url.replace(/^http/, 'ws')}/v1/stream?api_key=${key}`);
  // By headline for the latency section (a published title -> its arrival); by id to count arrivals (two
  // stored articles may share a headline: another wire's copy the near-duplicate rule did not merge).
  const receivedIds = new Set<string>();
  ws.on('message', (m) => {
    const a = JSON.parse(m.toString()) as { id: string; content: string };
    received.set(a.content, performance.timeOrigin + performance.now());
    receivedIds.add(a.id);
  });
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  // The service ends a client whose send buffer overflows (slow consumer): say so instead of waiting.
  let closed: string | null = null;
  ws.on('close', (code, reason) => (closed = `${code} ${reason.toString()}`));
  console.log(
    `bench:ingest on ${cpus().length} CPU(s), Node ${process.version}, ${DATABASE_URL ? `PostgreSQL (schema ${schema})` : `SQLite in ${dataDir}`}`,
  );

  try {
    const streamUrl = `${svc.url.replace(/^http/, 'ws')}/v1/stream?api_key=${key}`;
    if (ONLY === 'blocks' || ONLY === 'responsive') {
      ws.close();
      await (ONLY === 'blocks' ? blocks(svc, streamUrl) : responsive(svc, streamUrl, newKey));
      return;
    }
    // 1. Latency: publish -> stream client (first, so no item is a near-duplicate of the throughput items).
    feeds.set('/a.rss', []);
    feeds.set('/b.rss', []);
    await svc.store.sources.add(
      { name: 'lat-a', url: feeds.url('/a.rss'), everyMs: EVERY_MS, urgency: 'auto' },
      Date.now(),
    );
    await svc.store.sources.add(
      { name: 'lat-b', url: feeds.url('/b.rss'), everyMs: EVERY_MS, urgency: 'auto' },
      Date.now(),
    );
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
    const lat = [...published]
      .map(([t, at]) => (received.has(t) ? received.get(t)! - at : Number.POSITIVE_INFINITY))
      .sort((a, b) => a - b);
    const missing = lat.filter((x) => !Number.isFinite(x)).length;
    if (process.env.BENCH_DEBUG) {
      const archived = new Set((await svc.store.articles.list({ afterMs: 0, limit: 100000 })).map((x) => x.content));
      for (const [t] of published)
        if (!received.has(t)) console.log('missing:', JSON.stringify(t), 'stored:', archived.has(t));
    }
    const goal = EVERY_MS + 50;
    const p99 = pct(lat, 99);
    console.log(
      `\n1. latency, publish -> stream client, ${lat.length} items on 2 sources polled every ${EVERY_MS / 1000} s (${missing} never arrived)`,
    );
    console.log(
      `   p50 ${pct(lat, 50).toFixed(0)} ms   p90 ${pct(lat, 90).toFixed(0)} ms   p99 ${p99.toFixed(0)} ms   max ${lat.at(-1)!.toFixed(0)} ms`,
    );
    console.log(
      `   goal p99 <= poll interval + 50 ms = ${goal} ms: ${p99 <= goal ? 'met' : 'NOT met'} (p99 / goal = ${(p99 / goal).toFixed(2)})`,
    );
    await svc.store.sources.remove('lat-a');
    await svc.store.sources.remove('lat-b');

    // 2. Throughput.
    let n = 0;
    for (let f = 0; f < FEEDS; f++) {
      const items: Item[] = [];
      for (let i = 0; i < ITEMS; i++, n++)
        items.push({ guid: `bench-${n}`, title: headline(n), link: `https://example.com/bench/${n}?utm_source=bench` });
      feeds.set(`/t${f}.rss`, items);
    }
    const total = FEEDS * ITEMS;
    const before = receivedIds.size;
    const t0 = performance.now();
    for (let f = 0; f < FEEDS; f++)
      await svc.store.sources.add(
        { name: `t${f}`, url: feeds.url(`/t${f}.rss`), everyMs: 5_000, urgency: 'auto' },
        Date.now(),
      );
    svc.poller!.wake();
    const seen = async () => (await svc.store.sources.list()).reduce((s, x) => s + x.itemsSeen, 0);
    const deadline = performance.now() + 100_000;
    while ((await seen()) < total) {
      if (performance.now() > deadline) {
        const failing = (await svc.store.sources.list())
          .filter((x) => x.lastError !== null)
          .map((x) => `${x.name}: ${x.lastError}`);
        throw new Error(
          `not every item was read within 100 s (${await seen()} of ${total}); ${failing.join('; ') || 'no source failing'}`,
        );
      }
      await sleep(5);
    }
    const readAt = performance.now();
    const stored = (await svc.store.sources.list()).reduce((s, x) => s + x.itemsIngested, 0);
    while (receivedIds.size - before < stored) {
      if (closed !== null)
        throw new Error(
          `the stream client was closed by the service (${closed}) after receiving ${receivedIds.size - before} of ${stored} stored articles`,
        );
      if (performance.now() > deadline)
        throw new Error(
          `the stream client received ${receivedIds.size - before} of ${stored} stored articles within 100 s`,
        );
      await sleep(2);
    }
    const doneAt = performance.now();
    const secs = (doneAt - t0) / 1000;
    const rate = Math.round(total / secs);
    const dedup = (await svc.store.sources.list()).reduce((s, x) => s + x.itemsDeduplicated, 0);
    console.log(
      `\n2. throughput: ${total.toLocaleString('en-US')} items from ${FEEDS} feeds of ${ITEMS} (fetch, parse, enrich, dedup, store, publish) in ${secs.toFixed(2)} s`,
    );
    console.log(
      `   ${rate.toLocaleString('en-US')} items/s   goal >= ${GOAL_RATE.toLocaleString('en-US')}/s: ${rate >= GOAL_RATE ? 'met' : 'NOT met'} (x${(rate / GOAL_RATE).toFixed(2)})`,
    );
    console.log(
      `   every item read and ingested after ${((readAt - t0) / 1000).toFixed(2)} s (${Math.round(total / ((readAt - t0) / 1000)).toLocaleString('en-US')} items/s), the last one on the stream ${((doneAt - readAt) / 1000).toFixed(2)} s later`,
    );
    console.log(
      `   stored ${stored.toLocaleString('en-US')}, deduplicated ${dedup}, received by the stream client ${(receivedIds.size - before).toLocaleString('en-US')} (near-duplicates of these made-up headlines: the store's decision)`,
    );
    for (let f = 0; f < FEEDS; f++) await svc.store.sources.remove(`t${f}`);

    // 3. Where the time goes: each stage alone on fresh items (a fresh SQLite file per store variant).
    console.log(
      `\n3. stages alone, ${FEEDS} feeds of ${ITEMS} fresh items, one after the other (microseconds per item):`,
    );
    const stage = { parse: 0, map: 0, ingest: 0, ingestNoNear: 0 };
    const withNear = new SqliteStore(join(dataDir, 'stages-near.sqlite'));
    const noNear = new SqliteStore(join(dataDir, 'stages-exact.sqlite'));
    for (let f = 0; f < FEEDS; f++) {
      const items: Item[] = [];
      for (let i = 0; i < ITEMS; i++, n++)
        items.push({ guid: `stage-${n}`, title: headline(n), link: `https://example.com/stage/${n}` });
      const body = new TextEncoder().encode(rss(items));
      let t = performance.now();
      const parsed = parseFeed(body, { contentType: 'application/rss+xml', baseUrl: 'http://127.0.0.1/' });
      stage.parse += performance.now() - t;
      t = performance.now();
      const sourced = toSourcedItems({ name: 'stage', urgency: 'auto' }, parsed.items);
      stage.map += performance.now() - t;
      t = performance.now();
      await withNear.sources.ingestItems(sourced, Date.now);
      stage.ingest += performance.now() - t;
      const exact = sourced.map((x) => ({ ...x, nearKeys: [] }));
      t = performance.now();
      await noNear.sources.ingestItems(exact, Date.now);
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
    ws.close();
    await blocks(svc, streamUrl);
    await responsive(svc, streamUrl, newKey);
  } finally {
    ws.close();
    await svc.close();
    await feeds.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (DATABASE_URL) {
      const db = new pg.Client({ connectionString: connectionString(DATABASE_URL) });
      await db.connect();
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await db.end();
    }
  }
}

/**
 * The start of the harness threads of sections 4 and 5 (the stream client, the feed server, the pushers, the
 * REST prober): they stand for clients on other machines, so each runs at a lower CPU priority (Linux: nice 10
 * on the thread, as the service's own worker threads) and does not take a core from the event loop measured.
 */
const HARNESS_THREAD = `const { parentPort, workerData } = require('node:worker_threads');
     try { require('node:os').setPriority(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()), 10); } catch {}
     `;

type Service = Awaited<ReturnType<typeof startService>>;

/** A harness thread running `code` with `data` as its workerData. */
const harness = (code: string, data: unknown) =>
  new Worker(`${HARNESS_THREAD}${code}`, { eval: true, workerData: data });
const nextMessage = <T>(w: Worker) => new Promise<T>((r) => w.once('message', r));

/**
 * Everything the harness itself allocates is made before a measured window, then collected (bench:ingest runs
 * with --expose-gc), so the window sees the service's own garbage.
 */
async function collectHarnessGarbage(): Promise<void> {
  (globalThis as { gc?: () => void }).gc?.();
  await sleep(100);
}

/** The start of every probe article's content (section 5): the stream client notes the arrival of each. */
const PROBE_MARKER = 'zqprobe-';

/**
 * A stream client on a harness thread: it keeps the service's stream busy (every stored article is sent to it)
 * without its own reading of the frames counting as the service's work. Asked, it tells how many frames it
 * received and when (ms since the epoch) each probe article arrived, by its token (PROBE_MARKER…).
 */
async function streamClient(url: string, section: string) {
  const client = harness(
    `const WebSocket = require(workerData.ws);
     let received = 0;
     const arrivals = {};
     const ws = new WebSocket(workerData.url);
     ws.on('message', (m) => {
       received++;
       const at = m.indexOf(workerData.marker);
       if (at >= 0) arrivals[/^[a-z0-9-]+/.exec(m.toString('latin1', at, at + 40))[0]] = performance.timeOrigin + performance.now();
     });
     ws.once('open', () => parentPort.postMessage('open'));
     ws.once('error', (e) => parentPort.postMessage('error: ' + e.message));
     parentPort.on('message', (m) => {
       if (m === 'report') return parentPort.postMessage({ received, arrivals });
       ws.close();
       parentPort.close();
     });`,
    { url, ws: createRequire(import.meta.url).resolve('ws'), marker: PROBE_MARKER },
  );
  const opened = await nextMessage<string>(client);
  if (opened !== 'open') throw new Error(`the stream client of section ${section} could not connect (${opened})`);
  return {
    report() {
      client.postMessage('report');
      return nextMessage<{ received: number; arrivals: Record<string, number> }>(client);
    },
    async close() {
      client.postMessage('close');
      await client.terminate();
    },
  };
}

/**
 * A feed of `n` distinct items (each with a ~900-byte description), served from a harness thread (its sending of
 * megabytes is not the service's work).
 */
async function feedThread(name: string, n: number, first: number) {
  const items: Item[] = [];
  for (let i = 0; i < n; i++) {
    const description = Array.from({ length: 85 }, word).join(' ');
    items.push({
      guid: `${name}-${i}`,
      title: `${headline(first + i)} ${i}`,
      link: `https://example.com/${name}/${i}`,
      description,
    });
  }
  const body = rss(items);
  const server = harness(
    `const body = Buffer.from(workerData.body);
     const server = require('node:http').createServer((req, res) => res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' }).end(body));
     server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
     parentPort.on('message', () => { server.closeAllConnections(); server.close(); parentPort.close(); });`,
    { body },
  );
  const port = await nextMessage<number>(server);
  return {
    url: `http://127.0.0.1:${port}/${name}.rss`,
    bytes: Buffer.byteLength(body),
    async close() {
      server.postMessage('close');
      await server.terminate();
    },
  };
}

/** Registers the feed (polled once an hour) and waits for its first poll to be recorded: the ms from registration. */
async function pollFeed(svc: Service, name: string, url: string, n: number): Promise<number> {
  const t0 = performance.now();
  await svc.store.sources.add({ name, url, everyMs: 3600_000, urgency: 'auto' }, Date.now());
  svc.poller!.wake();
  for (;;) {
    const rec = await svc.store.sources.get(name);
    if (rec?.lastPollAt) {
      if (rec.lastError) throw new Error(`the ${n}-item poll failed: ${rec.lastError}`);
      return performance.now() - t0;
    }
    if (performance.now() - t0 > 120_000) throw new Error(`the ${n}-item feed was not polled within 120 s`);
    await sleep(5);
  }
}

/** The feed's record after its poll; the feed is removed. */
async function dropFeed(svc: Service, name: string) {
  const rec = (await svc.store.sources.get(name))!;
  await svc.store.sources.remove(name);
  return rec;
}

/** A push body of `n` articles of about 900 characters (~1 MiB for 1,000), as NDJSON lines. */
function pushLines(prefix: string, n: number, first: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const content = `${headline(first + i)} ${i}: ${Array.from({ length: 150 }, word).join(' ')}`.slice(0, 900);
    lines.push(
      JSON.stringify({
        source: 'bench-push',
        id: `${prefix}-${i}`,
        content,
        url: `https://example.com/${prefix}/${i}`,
      }),
    );
  }
  return lines;
}

interface PushAnswer {
  stored: number;
  duplicates: number;
  invalid: number;
}

/**
 * The push's client, on a harness thread (its sending of the body and reading of the answer are not the
 * service's work): it gets the body now and sends it on the admin listener when told.
 */
async function pusherThread(svc: Service, body: string) {
  const pusher = harness(
    `parentPort.on('message', async () => {
       try {
         const res = await fetch(workerData.url, { method: 'POST', headers: { authorization: 'Bearer ' + workerData.token, 'content-type': 'application/x-ndjson' }, body: workerData.body });
         parentPort.postMessage({ status: res.status, answer: await res.json() });
       } catch (e) {
         parentPort.postMessage({ status: 0, answer: { error: e.message } });
       }
     });`,
    { url: `${svc.adminUrl}/admin/v1/articles`, token: ADMIN_TOKEN, body },
  );
  await new Promise<void>((r) => pusher.once('online', () => r()));
  return {
    /** Sends the body: its answer and the ms from request to answer. */
    async push() {
      const p0 = performance.now();
      const answered = nextMessage<{ status: number; answer: PushAnswer }>(pusher);
      pusher.postMessage('push');
      const { status, answer } = await answered;
      const ms = performance.now() - p0;
      if (status !== 200) throw new Error(`the push answered ${status}: ${JSON.stringify(answer)}`);
      return { answer, ms };
    },
    close: () => pusher.terminate(),
  };
}

/**
 * Section 4: the longest event-loop block while polling a 1,000- and a 5,000-item feed and taking a 1,000-article push,
 * and the JSON.parse floor.
 */
async function blocks(svc: Service, streamUrl: string): Promise<void> {
  const client = await streamClient(streamUrl, '4');
  const probe = monitorEventLoopDelay({ resolution: 1 });
  const longest = () => probe.max / 1e6;
  const p99 = () => probe.percentile(99) / 1e6;
  // The event-loop thread's own CPU between two ticks of a 1 ms timer: the longest stretch of work it did at once.
  const threadCpu = (process as unknown as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
  let cpuMax = 0;
  let cpuTimer: NodeJS.Timeout | undefined;
  const cpuStart = () => {
    cpuMax = 0;
    if (!threadCpu) return;
    let last = threadCpu();
    cpuTimer = setInterval(() => {
      const now = threadCpu();
      cpuMax = Math.max(cpuMax, (now.user - last.user + now.system - last.system) / 1000);
      last = now;
    }, 1);
  };
  const cpuStop = () => {
    clearInterval(cpuTimer);
    return threadCpu ? cpuMax : Number.NaN;
  };
  // The longest garbage-collection pause in the same window (part of any block the probe sees).
  let gcMax = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMax = Math.max(gcMax, e.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  const gcLongest = () => {
    const g = gcMax;
    gcMax = 0;
    return g;
  };
  /** Opens a measured window: the harness's own garbage collected first, then every probe from zero. */
  const openWindow = async () => {
    await collectHarnessGarbage();
    gcLongest();
    probe.reset();
    probe.enable();
    cpuStart();
  };
  /** Closes it: the longest block, the p99 block, the loop's own CPU at once and the longest GC pause. */
  const closeWindow = () => {
    probe.disable();
    return { cpu: cpuStop(), block: longest(), p99: p99(), gc: gcLongest() };
  };
  const verdict = (ms: number) => (ms <= BLOCK_GOAL_MS ? 'met' : 'NOT met');
  // Let the start-up settle (index load, first timers) before measuring.
  await sleep(500);

  // The push body too (section 4's second window), before the first window.
  const lines = pushLines('push', 1000, 200_000);
  const body = lines.join('\n');
  const asArray = `[${lines.join(',')}]`;
  const pusher = await pusherThread(svc, body);
  /** One measured poll of a feed of `n` distinct items. */
  const pollWindow = async (name: string, n: number, first: number) => {
    const feed = await feedThread(name, n, first);
    await openWindow();
    const elapsed = await pollFeed(svc, name, feed.url, n);
    const window = closeWindow();
    const rec = await dropFeed(svc, name);
    await feed.close();
    return { ...window, rec, ms: elapsed, bytes: feed.bytes };
  };
  // Two feeds, 1,000 then 5,000 items (~0.9 and ~4.5 MB): the cost per item must not grow with the feed.
  const small = await pollWindow('feed-1k', 1000, 300_000);
  const big = await pollWindow('big', 5000, 100_000);

  // A push of 1,000 articles, about 1 MiB of NDJSON (made above).
  await openWindow();
  const { answer, ms: pushMs } = await pusher.push();
  const { cpu: pushCpu, block: pushBlock, p99: pushP99, gc: pushGc } = closeWindow();
  await pusher.close();

  // The floor: one plain JSON.parse of the same body (as one JSON array), under the same probe.
  await openWindow();
  await sleep(20);
  let parseMs = 0;
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      const t = performance.now();
      JSON.parse(asArray);
      parseMs = performance.now() - t;
      resolve();
    }, 5),
  );
  await sleep(20);
  const { cpu: floorCpu, block: floorBlock } = closeWindow();

  const ms = (x: number) => `${x.toFixed(1)} ms`.padStart(8);
  console.log(
    `\n4. event-loop blocks (monitorEventLoopDelay, 1 ms resolution; goal: longest <= ${BLOCK_GOAL_MS} ms), on ${cpus().length} CPU(s), load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}, ${v8BackgroundThreads()} V8 background thread(s)`,
  );
  console.log(`                                            longest      p99   loop CPU at once   items/s`);
  const pollRow = (p: typeof big) => {
    console.log(
      `   poll of one feed, ${p.rec.itemsSeen.toLocaleString('en-US')} items, ${(p.bytes / 1e6).toFixed(1)} MB: ${ms(p.block)} ${ms(p.p99)}   ${ms(p.cpu)}        ${String(Math.round(p.rec.itemsSeen / (p.ms / 1000))).padStart(6)}   ${verdict(p.block)}`,
    );
    console.log(
      `      (stored ${p.rec.itemsIngested}, deduplicated ${p.rec.itemsDeduplicated}; ${(p.ms / 1000).toFixed(2)} s from registration; longest GC pause ${p.gc.toFixed(1)} ms)`,
    );
  };
  pollRow(small);
  pollRow(big);
  const perItem = (p: typeof big) => (p.ms * 1000) / p.rec.itemsSeen;
  console.log(
    `   per item, registration to recorded: ${perItem(small).toFixed(0)} us (1,000 items), ${perItem(big).toFixed(0)} us (5,000 items): x${(perItem(big) / perItem(small)).toFixed(2)} (flat: about 1)`,
  );
  console.log(
    `   push of ${lines.length.toLocaleString('en-US')} articles, ${(Buffer.byteLength(body) / 1048576).toFixed(2)} MiB:  ${ms(pushBlock)} ${ms(pushP99)}   ${ms(pushCpu)}        ${String(Math.round(lines.length / (pushMs / 1000))).padStart(6)}   ${verdict(pushBlock)}`,
  );
  console.log(
    `      (stored ${answer.stored}, duplicates ${answer.duplicates}, invalid ${answer.invalid}; ${(pushMs / 1000).toFixed(2)} s; longest GC pause ${pushGc.toFixed(1)} ms)`,
  );
  console.log(
    `   floor, one JSON.parse of that body:       ${ms(floorBlock)}            ${ms(floorCpu)}   (the parse alone: ${parseMs.toFixed(1)} ms)`,
  );
  console.log(
    `   ratios to the floor (longest): poll x${(big.block / floorBlock).toFixed(2)}, push x${(pushBlock / floorBlock).toFixed(2)}`,
  );
  gc.disconnect();
  await client.close();
}

/** Section 5's goal: the slowest REST answer and the slowest stream delivery during an ingest. */
const RESPONSIVE_GOAL_MS = 100;
/** Section 5's REST keys (max tier, 60 requests a minute each): enough for ~120 requests/s, rotated. */
const REST_KEYS = 120;

/**
 * Section 5's REST prober, on a harness thread: from 'start' to 'stop', GET /v1/news?limit=1 one after the
 * other, the next ~10 ms after the previous answer; the latency of every 200 is noted, any other answer (a
 * 429 above all) is counted apart. No plan admits that rate, so the keys are rotated: the next one as soon
 * as the current one's X-RateLimit-Remaining is 0 (or on a 429). Each key is sent from an address of its own
 * (127.0.x.y): the IP guard blocks an address that presents 3 keys within a minute.
 */
function restProber(svc: Service, keys: string[]) {
  const prober = harness(
    `const http = require('node:http');
     const agent = new http.Agent({ keepAlive: true });
     let k = 0, running = false, done, latencies = [], refused = {};
     const get = (key, address) => new Promise((resolve) => {
       const req = http.get(workerData.url, { agent, localAddress: address, headers: { 'x-api-key': key } }, (res) => {
         res.resume();
         res.once('end', () => resolve({ status: res.statusCode, remaining: res.headers['x-ratelimit-remaining'] }));
       });
       req.once('error', (e) => resolve({ status: e.code ?? 'error' }));
     });
     const run = async () => {
       while (running) {
         const i = k % workerData.keys.length;
         const t = performance.now();
         const r = await get(workerData.keys[i], '127.0.' + (1 + Math.floor(i / 250)) + '.' + (1 + (i % 250)));
         const ms = performance.now() - t;
         if (r.status === 200) latencies.push(ms);
         else refused[r.status] = (refused[r.status] ?? 0) + 1;
         if (r.status === 429 || r.remaining === '0') k++;
         await new Promise((s) => setTimeout(s, 10));
       }
     };
     parentPort.on('message', async (m) => {
       if (m === 'start') {
         running = true;
         latencies = [];
         refused = {};
         done = run();
         parentPort.postMessage('started');
       } else {
         running = false;
         await done;
         parentPort.postMessage({ latencies, refused });
       }
     });`,
    { url: `${svc.url}/v1/news?limit=1`, keys },
  );
  return {
    start() {
      prober.postMessage('start');
      return nextMessage<string>(prober);
    },
    stop() {
      prober.postMessage('stop');
      return nextMessage<{ latencies: number[]; refused: Record<string, number> }>(prober);
    },
    close: () => prober.terminate(),
  };
}

/**
 * Section 5's probe pusher, on a harness thread: from 'start' to 'stop', one small distinct article every
 * 100 ms, each its own push on the admin listener (not waiting for the previous answer). Its content starts
 * with a token of its own (PROBE_MARKER, the phase, a count); the time just before the request is sent is
 * noted (ms since the epoch, the stream client's clock) for each article the push answered as stored.
 */
function probePusher(svc: Service) {
  const pusher = harness(
    `let n = 0, timer, sent = {}, failed = {};
     const inflight = new Set();
     // A fresh worker's first fetch loads its HTTP client (~60 ms): paid here, not by the first probe.
     const warm = fetch(new URL('/healthz', workerData.url)).then((r) => r.arrayBuffer()).catch(() => {});
     const word = () => workerData.words[Math.floor(Math.random() * workerData.words.length)];
     const pushOne = async (token) => {
       const content = token + ' ' + Array.from({ length: 9 }, word).join(' ');
       const body = JSON.stringify({ source: 'bench-probe', id: token, content, url: 'https://example.com/probe/' + token });
       const at = performance.timeOrigin + performance.now();
       try {
         const res = await fetch(workerData.url, { method: 'POST', headers: { authorization: 'Bearer ' + workerData.token, 'content-type': 'application/x-ndjson' }, body });
         const answer = await res.json();
         if (res.status === 200 && answer.stored === 1) sent[token] = at;
         else {
           const why = res.status === 200 ? 'not stored' : 'status ' + res.status;
           failed[why] = (failed[why] ?? 0) + 1;
         }
       } catch (e) {
         failed[e.message] = (failed[e.message] ?? 0) + 1;
       }
     };
     const tick = (phase) => {
       const p = pushOne(workerData.marker + phase + '-' + n++);
       inflight.add(p);
       p.finally(() => inflight.delete(p));
     };
     parentPort.on('message', async (m) => {
       if (m.start) {
         await warm;
         sent = {};
         failed = {};
         tick(m.start);
         timer = setInterval(() => tick(m.start), 100);
         parentPort.postMessage('started');
       } else {
         clearInterval(timer);
         await Promise.all(inflight);
         parentPort.postMessage({ sent, failed });
       }
     });`,
    { url: `${svc.adminUrl}/admin/v1/articles`, token: ADMIN_TOKEN, words: VOCABULARY, marker: PROBE_MARKER },
  );
  return {
    start(phase: string) {
      pusher.postMessage({ start: phase });
      return nextMessage<string>(pusher);
    },
    stop() {
      pusher.postMessage('stop');
      return nextMessage<{ sent: Record<string, number>; failed: Record<string, number> }>(pusher);
    },
    close: () => pusher.terminate(),
  };
}

/**
 * Section 5: what a client feels while the service ingests a 5,000-item feed, then a 1,000-article push: the
 * latency of REST answers and of stream deliveries (the probes run from just before the ingest starts to its
 * end, as section 4 defines it), and the ingest's items/s.
 */
async function responsive(svc: Service, streamUrl: string, newKey: (tier: string) => Promise<string>) {
  const keys: string[] = [];
  for (let i = 0; i < REST_KEYS; i++) keys.push(await newKey('max'));
  const client = await streamClient(streamUrl, '5');
  const rest = restProber(svc, keys);
  const probes = probePusher(svc);
  try {
    await sleep(500);
    /** The stream has sent everything stored: its client's count has not moved for 500 ms. */
    const drained = async () => {
      const deadline = performance.now() + 60_000;
      let last = -1;
      for (let r = (await client.report()).received; r !== last && performance.now() < deadline;) {
        last = r;
        await sleep(500);
        r = (await client.report()).received;
      }
    };
    /** The probes around one ingest (`run`: the ms from its start to its end). */
    const phase = async (name: string, run: () => Promise<number>) => {
      await drained();
      await collectHarnessGarbage();
      await Promise.all([rest.start(), probes.start(name)]);
      await sleep(100);
      const ms = await run();
      const [answers, pushed] = await Promise.all([rest.stop(), probes.stop()]);
      // Every probe stored is waited for on the stream (10 s at most; a later one counts as never arrived).
      const tokens = Object.keys(pushed.sent);
      const deadline = performance.now() + 10_000;
      let { arrivals } = await client.report();
      while (tokens.some((t) => arrivals[t] === undefined) && performance.now() < deadline) {
        await sleep(50);
        ({ arrivals } = await client.report());
      }
      const delivery = tokens.filter((t) => arrivals[t] !== undefined).map((t) => arrivals[t]! - pushed.sent[t]!);
      const notStored = Object.entries(pushed.failed).map(([why, n]) => `${n} ${why}`);
      return {
        ms,
        rest: answers.latencies.sort((a, b) => a - b),
        refused: Object.entries(answers.refused).map(([status, n]) => `${n} x ${status}`),
        stream: delivery.sort((a, b) => a - b),
        lost: tokens.length - delivery.length,
        notStored,
      };
    };

    // (a) one feed of 5,000 items polled, as in section 4.
    const feed = await feedThread('responsive-feed', 5000, 400_000);
    const polled = await phase('a', () => pollFeed(svc, 'responsive-feed', feed.url, 5000));
    const rec = await dropFeed(svc, 'responsive-feed');
    const poll = { ...polled, items: rec.itemsSeen, stored: rec.itemsIngested };
    await feed.close();
    // (b) one push of 1,000 articles (~1 MiB) on the admin listener, as in section 4.
    const lines = pushLines('responsive-push', 1000, 500_000);
    const pusher = await pusherThread(svc, lines.join('\n'));
    let answer: PushAnswer | undefined;
    const pushed = await phase('b', async () => {
      const done = await pusher.push();
      answer = done.answer;
      return done.ms;
    });
    const push = { ...pushed, items: lines.length, stored: answer!.stored };
    await pusher.close();

    const cells = (xs: (string | number | undefined)[]) =>
      xs.map((x) => (typeof x === 'number' ? x.toFixed(1) : (x ?? '-')).padStart(7)).join('');
    const stats = (xs: number[]) => cells([String(xs.length), pct(xs, 50), pct(xs, 99), xs.at(-1)]);
    const load = loadavg()
      .map((x) => x.toFixed(1))
      .join(' ');
    console.log(
      `\n5. responsiveness during an ingest, on ${cpus().length} CPU(s), load average ${load}: REST GET /v1/news?limit=1 one after another (~10 ms apart), one probe article pushed every 100 ms (push -> stream client)`,
    );
    const heads = cells(['n', 'p50', 'p99', 'max']);
    console.log(
      `   ${`responsive (${DATABASE_URL ? 'postgresql' : 'sqlite'})`.padEnd(24)}${'phase'.padEnd(22)}${'items/s'.padStart(8)}   REST${heads} (ms)   stream${heads} (ms)`,
    );
    const row = (what: string, r: typeof poll) =>
      console.log(
        `   ${''.padEnd(24)}${what.padEnd(22)}${String(Math.round(r.items / (r.ms / 1000))).padStart(8)}       ${stats(r.rest)}              ${stats(r.stream)}`,
      );
    row('poll, 5,000 items', poll);
    row('push, 1,000 articles', push);
    const slowest = (xs: number[][]) => Math.max(...xs.map((x) => x.at(-1) ?? Infinity));
    const [restMax, streamMax] = [slowest([poll.rest, push.rest]), slowest([poll.stream, push.stream])];
    const met = restMax < RESPONSIVE_GOAL_MS && streamMax < RESPONSIVE_GOAL_MS && poll.lost + push.lost === 0;
    console.log(
      `   goal: slowest REST answer and slowest stream delivery < ${RESPONSIVE_GOAL_MS} ms: ${met ? 'met' : 'NOT met'} (REST ${restMax.toFixed(1)} ms, stream ${streamMax.toFixed(1)} ms)`,
    );
    for (const [what, r] of [
      ['poll', poll],
      ['push', push],
    ] as const)
      console.log(
        `      (${what}: ${(r.ms / 1000).toFixed(2)} s, ${r.items.toLocaleString('en-US')} items, ${r.stored.toLocaleString('en-US')} stored; REST answers other than 200: ${r.refused.join(', ') || 'none'}; probes not stored: ${r.notStored.join(', ') || 'none'}, never on the stream: ${r.lost})`,
      );
  } finally {
    await Promise.all([rest.close(), probes.close(), client.close()]);
  }
}

await main();

/**
 * Ingestion benchmark (issue 11): the real service (`startService`, SQLite in a temp DATA_DIR or, with
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
 * 4. Event-loop blocks (issue 19): the longest time the service's event loop was held at once while it
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
 * It runs the service as `npm start` does, with V8's background threads sized to the machine
 * (--v8-pool-size=0, docs/operations.md); the heading of section 4 says how many there were.
 *
 * Everything (service, feed server, client) runs in this one process: the figures include their
 * competition for the CPU. In section 4 the clients and the feeds' servers run on worker
 * threads of it, so the event loop measured is the service's alone. Embeddings are a constant stub (the embedding worker is not what this measures).
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
/** --database-url=postgres://…: the service on PostgreSQL instead of SQLite, in a schema of its own (dropped at the end). */
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
    ...(DATABASE_URL ? { DATABASE_URL, DATABASE_SCHEMA: schema } : {}),
  });
  const logger = createLogger({ destination: { write: () => {} } });
  const svc = await startService(config, { embedder: stubEmbedder, logger });
  const feeds = await feedServer();
  const key = (await createKey(svc.store.accounts, { tier: 'pro', livePrefix: livePrefix(config), now: Date.now() }))
    .key;
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
    if (ONLY === 'blocks') {
      ws.close();
      await blocks(svc, streamUrl);
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
 * The start of section 4's harness threads (the stream client, the feed server, the pusher): they stand
 * for clients on other machines, so each runs at a lower CPU priority (Linux: nice 10 on the thread, as
 * the service's own worker threads) and does not take a core from the event loop measured.
 */
const HARNESS_THREAD = `const { parentPort, workerData } = require('node:worker_threads');
     try { require('node:os').setPriority(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()), 10); } catch {}
     `;

/** Section 4: the longest event-loop block while polling a 1,000- and a 5,000-item feed and taking a 1,000-article push, and the JSON.parse floor. */
async function blocks(svc: Awaited<ReturnType<typeof startService>>, streamUrl: string): Promise<void> {
  // The stream client of this section runs on a worker thread: it keeps the service's stream busy (every
  // stored article is sent to it) without its own reading of the frames counting as the service's blocks.
  const client = new Worker(
    `${HARNESS_THREAD}
     const WebSocket = require(workerData.ws);
     let received = 0;
     const ws = new WebSocket(workerData.url);
     ws.on('message', () => received++);
     ws.once('open', () => parentPort.postMessage('open'));
     ws.once('error', (e) => parentPort.postMessage('error: ' + e.message));
     parentPort.on('message', () => { ws.close(); parentPort.close(); });`,
    { eval: true, workerData: { url: streamUrl, ws: createRequire(import.meta.url).resolve('ws') } },
  );
  const opened = await new Promise<string>((r) => client.once('message', r));
  if (opened !== 'open') throw new Error(`the stream client of section 4 could not connect (${opened})`);
  // Everything the harness itself allocates is made before the windows, then collected (bench:ingest runs
  // with --expose-gc), so the windows see the service's own garbage.
  const collect = () => (globalThis as { gc?: () => void }).gc?.();
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
    collect();
    await sleep(100);
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
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const content = `${headline(200_000 + i)} ${i}: ${Array.from({ length: 150 }, word).join(' ')}`.slice(0, 900);
    lines.push(
      JSON.stringify({ source: 'bench-push', id: `push-${i}`, content, url: `https://example.com/push/${i}` }),
    );
  }
  const body = lines.join('\n');
  const asArray = `[${lines.join(',')}]`;
  // The push's client runs on a worker thread too (its sending of the body and reading of the answer are
  // not the service's work); it gets the body now, before the windows, and sends it when told.
  const pusher = new Worker(
    `${HARNESS_THREAD}
     parentPort.on('message', async () => {
       try {
         const res = await fetch(workerData.url, { method: 'POST', headers: { authorization: 'Bearer ' + workerData.token, 'content-type': 'application/x-ndjson' }, body: workerData.body });
         parentPort.postMessage({ status: res.status, answer: await res.json() });
       } catch (e) {
         parentPort.postMessage({ status: 0, answer: { error: e.message } });
       }
     });`,
    { eval: true, workerData: { url: `${svc.adminUrl}/admin/v1/articles`, token: ADMIN_TOKEN, body } },
  );
  await new Promise<void>((r) => pusher.once('online', () => r()));
  /**
   * One measured poll of a feed of `n` distinct items (each with a ~900-byte description), served from a
   * worker thread (as the clients run on theirs: its sending of megabytes is not the service's work).
   */
  const pollWindow = async (name: string, n: number, first: number) => {
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
    const feedBody = rss(items);
    const server = new Worker(
      `${HARNESS_THREAD}
       const body = Buffer.from(workerData.body);
       const server = require('node:http').createServer((req, res) => res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' }).end(body));
       server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
       parentPort.on('message', () => { server.closeAllConnections(); server.close(); parentPort.close(); });`,
      { eval: true, workerData: { body: feedBody } },
    );
    const port = await new Promise<number>((r) => server.once('message', r));
    await openWindow();
    const t0 = performance.now();
    await svc.store.sources.add(
      { name, url: `http://127.0.0.1:${port}/${name}.rss`, everyMs: 3600_000, urgency: 'auto' },
      Date.now(),
    );
    svc.poller!.wake();
    for (;;) {
      const rec = await svc.store.sources.get(name);
      if (rec?.lastPollAt) {
        if (rec.lastError) throw new Error(`the ${n}-item poll failed: ${rec.lastError}`);
        break;
      }
      if (performance.now() - t0 > 120_000) throw new Error(`the ${n}-item feed was not polled within 120 s`);
      await sleep(5);
    }
    const elapsed = performance.now() - t0;
    const window = closeWindow();
    const rec = (await svc.store.sources.get(name))!;
    await svc.store.sources.remove(name);
    server.postMessage('close');
    await server.terminate();
    return { ...window, rec, ms: elapsed, bytes: Buffer.byteLength(feedBody) };
  };
  // Two feeds, 1,000 then 5,000 items (~0.9 and ~4.5 MB): the cost per item must not grow with the feed.
  const small = await pollWindow('feed-1k', 1000, 300_000);
  const big = await pollWindow('big', 5000, 100_000);

  // A push of 1,000 articles, about 1 MiB of NDJSON (made above).
  await openWindow();
  const p0 = performance.now();
  const pushed = new Promise<{ status: number; answer: { stored: number; duplicates: number; invalid: number } }>((r) =>
    pusher.once('message', r),
  );
  pusher.postMessage('push');
  const { status: pushStatus, answer } = await pushed;
  const pushMs = performance.now() - p0;
  const { cpu: pushCpu, block: pushBlock, p99: pushP99, gc: pushGc } = closeWindow();
  await pusher.terminate();
  if (pushStatus !== 200) throw new Error(`the push answered ${pushStatus}: ${JSON.stringify(answer)}`);

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
  client.postMessage('close');
  await client.terminate();
}

await main();

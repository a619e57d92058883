/**
 * Webhooks benchmark: the real service (`startService`, SQLite in a temp DATA_DIR, the
 * dispatcher and the stream as `fns serve` wires them), receivers on loopback, all in this one run:
 *
 *   npm run bench:webhooks [-- --endpoints=100 --rounds=40 --burst=200 --memory-endpoints=1000 --down=100
 *   --memory-burst=50]
 *
 *   1. latency: one article at a time (stored by this process, then woken as a push wakes them):
 *      `received_at` → receipt at the stream client (the baseline) and at each of N webhook endpoints,
 *      p50/p99, and the webhook p99 added over the stream's;
 *   2. throughput: a burst of articles to N endpoints, deliveries per second from the commit to the last
 *      receipt, against a baseline measured in the same run: the same requests (same sender, same
 *      receiver, N in parallel, one at a time per endpoint) sent by a bare loop without the dispatcher;
 *   3. memory: M endpoints of which D are down (refused connections, retrying), a burst delivered to the
 *      others: heap and RSS after, against before the endpoints were added.
 *
 * Timings on a shared machine: the load average is printed with the results.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { loadConfig } from '../src/config/index.js';
import { createKey } from '../src/cli/operator.js';
import { streamAddress } from '../src/contract/index.js';
import { startService, type RunningService } from '../src/server/index.js';
import { livePrefix } from '../src/auth/prefix.js';
import { httpSender, messageId, newEndpointId, newSecret, SecretBox, signedHeaders } from '../src/webhooks/index.js';
import type { NewArticle } from '../src/store/ports/index.js';

const arg = (name: string, dflt: number) => {
  const m = process.argv.find((a) => a.startsWith(`--${name}=`));
  return m ? Number(m.split('=')[1]) : dflt;
};
const ENDPOINTS = arg('endpoints', 100);
const ROUNDS = arg('rounds', 40);
const BURST = arg('burst', 200);
const MEMORY_ENDPOINTS = arg('memory-endpoints', 1000);
const DOWN = arg('down', 100);
const MEMORY_BURST = arg('memory-burst', 50);

const now = () => performance.timeOrigin + performance.now();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const article = (i: number): NewArticle => ({
  content: `bench ${i} Central bank signals a pause as inflation cools; markets price in cuts for next year`,
  urgency: 'breaking',
  sentiment: 'dovish',
  published_at: null,
  tickers: [{ ticker: 'SPY', sentiment: 'positive' }],
});
const RECEIVED = '"received_at":"';
const receivedAtOf = (body: string) => {
  const i = body.indexOf(RECEIVED);
  return Date.parse(body.slice(i + RECEIVED.length, body.indexOf('"', i + RECEIVED.length)));
};

/** One loopback receiver for every endpoint (path /e/<n>): answers 200, calls `onReceipt`. */
async function receiver(
  onReceipt: (path: string, body: string, at: number) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      onReceipt(req.url ?? '', body, now());
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.maxRequestsPerSocket = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function service(dataDir: string): Promise<RunningService> {
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    MAX_CONNECTIONS_PER_ADDRESS: '0',
  });
  return startService(config, {
    log: () => {},
    pollSources: false,
    embedder: {
      modelId: 'bench:none',
      embed: async (texts) => texts.map(() => new Float32Array(8).fill(1 / Math.sqrt(8))),
    },
  });
}

let onReceipt: (path: string, body: string, at: number) => void = () => {};
const rx = await receiver((p, b, at) => onReceipt(p, b, at));
const box = new SecretBox();
console.log(
  `bench:webhooks, ${ENDPOINTS} endpoints, ${ROUNDS} rounds, burst ${BURST}; load average before: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (2 cores, shared)`,
);

// ---- 1 and 2: latency and throughput with N endpoints and one stream client ----
const dir1 = mkdtempSync(join(tmpdir(), 'fns-bench-wh-'));
const svc = await service(dir1);
const acct = await svc.store.accounts.createAccount('max', Date.now());
for (let i = 0; i < ENDPOINTS; i++)
  await svc.store.webhooks.add(
    { id: newEndpointId(), accountId: acct.id, url: `${rx.url}/e/${i}`, tickers: null, secret: box.seal(newSecret()) },
    Date.now(),
  );
await svc.webhooks!.refresh();
const { key } = await createKey(svc.store.accounts, {
  tier: 'pro',
  livePrefix: livePrefix({ brand: 'fns' }),
  now: Date.now(),
});
let streamLat: number[] = [];
const ws = new WebSocket(`${svc.url.replace(/^http/, 'ws')}${streamAddress}?api_key=${key}`);
ws.on('message', (data) => streamLat.push(now() - receivedAtOf(data.toString())));
await new Promise<void>((r, j) => (ws.once('open', () => r()), ws.once('error', j)));

const publish = async (articles: NewArticle[]) => {
  await svc.store.articles.insert(articles, Date.now);
  svc.stream.wake();
  svc.webhooks!.wake();
};

let hookLat: number[] = [];
let count = 0;
let waiter: { n: number; resolve: () => void } | undefined;
onReceipt = (_p, body, at) => {
  hookLat.push(at - receivedAtOf(body));
  count++;
  if (waiter && count >= waiter.n) {
    waiter.resolve();
    waiter = undefined;
  }
};
const received = (n: number) =>
  count >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiter = { n, resolve }));

// Warm-up (connections, JIT), not counted.
await publish([article(-1)]);
await received(ENDPOINTS);
hookLat = [];
streamLat = [];
count = 0;
for (let r = 0; r < ROUNDS; r++) {
  await publish([article(r)]);
  await received((r + 1) * ENDPOINTS);
  while (streamLat.length < r + 1) await new Promise((res) => setTimeout(res, 1));
}
const sP50 = pct(streamLat, 50);
const sP99 = pct(streamLat, 99);
const hP50 = pct(hookLat, 50);
const hP99 = pct(hookLat, 99);
console.log(`\n1. latency, received_at → receipt (${ROUNDS} single articles):`);
console.log(`   stream (1 pro client, baseline)   p50 ${ms(sP50)}  p99 ${ms(sP99)}`);
console.log(
  `   webhooks (${ENDPOINTS} endpoints)          p50 ${ms(hP50)}  p99 ${ms(hP99)}   (${hookLat.length} deliveries)`,
);
console.log(`   webhook p99 added over the stream's: ${ms(hP99 - sP99)}   (goal ≤ 50 ms)`);

// Throughput: a burst.
count = 0;
hookLat = [];
const t0 = now();
await publish(Array.from({ length: BURST }, (_, i) => article(1000 + i)));
await received(BURST * ENDPOINTS);
const dispatchRate = (BURST * ENDPOINTS) / ((now() - t0) / 1000);
// Baseline: the same requests without the dispatcher (a bare loop per endpoint, same sender and receiver).
const body = JSON.stringify({
  type: 'article.created',
  timestamp: new Date().toISOString(),
  data: { id: 'x', content: article(0).content, received_at: new Date().toISOString() },
});
const secret = newSecret();
count = 0;
const t1 = now();
await Promise.all(
  Array.from({ length: ENDPOINTS }, async (_, e) => {
    const url = new URL(`${rx.url}/e/${e}`);
    for (let i = 0; i < BURST; i++) {
      const ts = Math.floor(Date.now() / 1000);
      const id = messageId('wh_0000000000000000', '01JD0Q2V5N8Y3C7KQ4W9M6T1ZB');
      await httpSender({
        url,
        address: { address: '127.0.0.1', family: 4 },
        headers: signedHeaders([secret], id, ts, body),
        body,
        timeoutMs: 10_000,
      });
    }
  }),
);
const bareRate = (BURST * ENDPOINTS) / ((now() - t1) / 1000);
console.log(
  `\n2. throughput, a burst of ${BURST} articles to ${ENDPOINTS} endpoints (${BURST * ENDPOINTS} deliveries):`,
);
console.log(`   dispatcher (commit → last receipt)  ${dispatchRate.toFixed(0)} deliveries/s   (goal ≥ 2,000)`);
console.log(
  `   bare loop, same requests (baseline) ${bareRate.toFixed(0)} deliveries/s   → dispatcher at ${(dispatchRate / bareRate).toFixed(2)}× the baseline`,
);
console.log(`   burst latency received_at → receipt: p50 ${ms(pct(hookLat, 50))}  p99 ${ms(pct(hookLat, 99))}`);
ws.close();
await svc.close();
rmSync(dir1, { recursive: true, force: true });

// ---- 3: memory with M endpoints, D of them down ----
const dir2 = mkdtempSync(join(tmpdir(), 'fns-bench-wh-'));
const svc2 = await service(dir2);
const acct2 = await svc2.store.accounts.createAccount('pro', Date.now());
const gc = (globalThis as { gc?: () => void }).gc;
const settle = async () => {
  gc?.();
  await new Promise((r) => setTimeout(r, 50));
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
};
const before = await settle();
const dead = createServer();
await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
await new Promise<void>((r) => dead.close(() => r())); // a port nobody listens on: refused at once
for (let i = 0; i < MEMORY_ENDPOINTS; i++) {
  const url = i < DOWN ? `${deadUrl}/down/${i}` : `${rx.url}/e/${i}`;
  await svc2.store.webhooks.add(
    { id: newEndpointId(), accountId: acct2.id, url, tickers: null, secret: box.seal(newSecret()) },
    Date.now(),
  );
}
await svc2.webhooks!.refresh();
count = 0;
const publish2 = async (articles: NewArticle[]) => {
  await svc2.store.articles.insert(articles, Date.now);
  svc2.webhooks!.wake();
};
const t2 = now();
await publish2(Array.from({ length: MEMORY_BURST }, (_, i) => article(5000 + i)));
await received(MEMORY_BURST * (MEMORY_ENDPOINTS - DOWN));
const rate2 = (MEMORY_BURST * (MEMORY_ENDPOINTS - DOWN)) / ((now() - t2) / 1000);
const after = await settle();
const status = await svc2.webhooks!.status();
const backlogDown = status.filter((s) => s.backlog > 0).length;
console.log(
  `\n3. memory: ${MEMORY_ENDPOINTS} endpoints, ${DOWN} down (refused, retrying), ${MEMORY_BURST} articles delivered to the other ${MEMORY_ENDPOINTS - DOWN}:`,
);
console.log(
  `   heap ${(before.heap / 2 ** 20).toFixed(1)} → ${(after.heap / 2 ** 20).toFixed(1)} MiB (+${((after.heap - before.heap) / 2 ** 20).toFixed(1)} MiB, ${((after.heap - before.heap) / MEMORY_ENDPOINTS / 1024).toFixed(1)} KiB per endpoint)${gc ? '' : ' (run with node --expose-gc for settled figures)'}`,
);
console.log(`   rss  ${(before.rss / 2 ** 20).toFixed(1)} → ${(after.rss / 2 ** 20).toFixed(1)} MiB`);
console.log(
  `   ${backlogDown} endpoints with a backlog (the down ones: ${MEMORY_BURST} articles each, a cursor in the store, no bodies held); ${rate2.toFixed(0)} deliveries/s meanwhile`,
);
await svc2.close();
rmSync(dir2, { recursive: true, force: true });
rx.server.closeAllConnections();
rx.server.close();
console.log(
  `\nload average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);

/**
 * `npm run demo:burst` (or `npx tsx scripts/paging-burst.ts`): what gap-free paging changes, measured
 * before/after (polling by `since`, as before 1.1.0, against following `after` and `next`).
 *
 * A 20,000-article burst, every article sharing one received_at, is ingested in batches while two
 * clients poll the same service (createApp on a SQLite file, as in production):
 *
 * - the `since` client polls `GET /v1/news?since=<newest received_at it has>&limit=100` (the only way to
 *   follow the archive before 1.1.0);
 * - the `after` client follows `GET /v1/news?after=<newest id it has>&limit=100`, then `next`.
 *
 * When the burst is stored and both clients have caught up, the script prints how many of the burst's
 * articles each client never received, and how many it received twice. The rate limiter admits every
 * request (as in bench:rest), so what is measured is the paging rule, not the plan's request budget.
 *
 * BURST (20000), BATCH (250: articles per insert transaction), LIMIT (100) override the shape.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { limits } from '../src/contract/index.js';
import { createKey } from '../src/cli/operator.js';
import { createApp } from '../src/http/app.js';
import { benchAppDeps } from './lib/bench-app.js';
import { SqliteStore } from '../src/store/sqlite/index.js';

const BURST = Number(process.env.BURST ?? 20_000);
const BATCH = Number(process.env.BATCH ?? 250);
const LIMIT = Number(process.env.LIMIT ?? 100);
const POLL_MS = 20;

interface Page {
  count: number;
  articles: { id: string; received_at: string }[];
  next: string | null;
}

interface Tally {
  requests: number;
  received: Map<string, number>;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fns-burst-'));
  const store = new SqliteStore(join(dir, 'fns.sqlite'));
  let server: Server | undefined;
  try {
    const key = (await createKey(store.accounts, { tier: 'max', livePrefix: limits.keyPrefixes.live, now: Date.now() }))
      .key;
    const app = createApp(benchAppDeps(store));
    server = createServer(app);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (path: string): Promise<Page> => {
      const r = await fetch(base + path, { headers: { 'X-API-Key': key } });
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as Page;
    };

    // An article both clients have seen before the burst: where each one starts.
    const [first] = await store.articles.insert(
      [{ content: 'before the burst', urgency: 'regular', sentiment: null, published_at: null, tickers: [] }],
      Date.now,
    );
    let burstDone = false;
    const burstIds = new Set<string>();

    const sinceClient: Tally = { requests: 0, received: new Map() };
    const afterClient: Tally = { requests: 0, received: new Map() };
    const note = (t: Tally, page: Page) => {
      t.requests++;
      for (const a of page.articles) t.received.set(a.id, (t.received.get(a.id) ?? 0) + 1);
    };

    /** Polls until the burst is stored and a poll brings nothing new. */
    const pollSince = async () => {
      let since = first!.received_at;
      for (;;) {
        const done = burstDone;
        const page = await get(`/v1/news?limit=${LIMIT}&since=${encodeURIComponent(since)}`);
        note(sinceClient, page);
        // Newest first: the newest received_at of the page is the next `since`.
        if (page.count > 0) since = page.articles.reduce((m, a) => (a.received_at > m ? a.received_at : m), since);
        if (done && page.count === 0) return;
        await sleep(POLL_MS);
      }
    };
    const followAfter = async () => {
      let path = `/v1/news?limit=${LIMIT}&after=${first!.id}`;
      for (;;) {
        const done = burstDone;
        const page = await get(path);
        note(afterClient, page);
        path = page.next!;
        if (page.count === LIMIT) continue; // a full page: more is waiting, follow next at once
        if (done && page.count === 0) return;
        await sleep(POLL_MS);
      }
    };

    const ingest = async () => {
      // One received_at for the whole burst (the clock form: never earlier than the newest article).
      const at = Date.now() + 1;
      for (let n = 0; n < BURST; n += BATCH) {
        const size = Math.min(BATCH, BURST - n);
        const stored = await store.articles.insert(
          Array.from({ length: size }, (_, i) => ({
            content: `burst article ${n + i}`,
            urgency: 'flash' as const,
            sentiment: null,
            published_at: null,
            tickers: [],
          })),
          () => at,
        );
        for (const a of stored) burstIds.add(a.id);
        await sleep(1); // let the clients in between two commits
      }
      burstDone = true;
    };

    const started = performance.now();
    await Promise.all([ingest(), pollSince(), followAfter()]);
    const seconds = (performance.now() - started) / 1000;
    const receivedAts = new Set(
      (await store.articles.getMany([...burstIds].slice(0, 1).concat([...burstIds].slice(-1)))).map(
        (a) => a.received_at,
      ),
    );

    const report = (name: string, t: Tally) => {
      const got = [...burstIds].filter((id) => t.received.has(id)).length;
      const twice = [...t.received.values()].filter((c) => c > 1).length;
      return `${name.padEnd(34)} received ${String(got).padStart(6)} of ${BURST}, missed ${String(BURST - got).padStart(6)}, duplicates ${twice}, ${t.requests} requests`;
    };
    console.log(
      `paging-burst: ${BURST.toLocaleString()} articles in batches of ${BATCH}, first and last received at ${[...receivedAts].join(' / ')}, ${seconds.toFixed(1)} s`,
    );
    console.log(report(`since polling (limit=${LIMIT})`, sinceClient));
    console.log(report(`after + next (limit=${LIMIT})`, afterClient));
  } finally {
    if (server) await new Promise((r) => server!.close(r));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

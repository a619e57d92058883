/**
 * The source poller against real loopback feeds and a real SQLite file: new items once (across polls and
 * restarts), 304s cost nothing, a broken or slow source neither hides the truth nor delays a healthy one,
 * Retry-After, leases between two pollers, pause within a second, stop gives the lease back. The
 * schedule rules (success floor, backoff, Retry-After) are pure and tested with fixed jitter.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  nextPollAfterFailure,
  nextPollAfterSuccess,
  POLL_DEFAULTS,
  pollerUserAgent,
  SourcePoller,
  type PollReport,
  type PollerOptions,
} from '../../src/sources/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { SourceRecord, SourceStore } from '../../src/store/ports/index.js';
import { until } from '../support/wait.js';
import { recordLog } from '../support/log.js';

const dir = mkdtempSync(join(tmpdir(), 'fns-poller-'));
let fileNo = 0;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh SQLite file; `open()` gives another connection to it (another process's view). */
function database() {
  const file = join(dir, `s${++fileNo}.sqlite`);
  const open = () => {
    const s = new SqliteStore(file);
    cleanups.push(() => s.close());
    return s;
  };
  return { file, open };
}

interface Hit {
  path: string;
  at: number;
  userAgent: string | undefined;
  ifNoneMatch: string | undefined;
  status?: number;
}

/** A loopback server whose routes the test writes; every request recorded, concurrency per path counted. */
async function feedServer(routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void>) {
  const hits: Hit[] = [];
  const open = new Map<string, number>();
  const maxOpen = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const hit: Hit = {
      path,
      at: Date.now(),
      userAgent: req.headers['user-agent'],
      ifNoneMatch: req.headers['if-none-match'] as string | undefined,
    };
    hits.push(hit);
    open.set(path, (open.get(path) ?? 0) + 1);
    maxOpen.set(path, Math.max(maxOpen.get(path) ?? 0, open.get(path)!));
    res.on('close', () => open.set(path, open.get(path)! - 1));
    res.on('finish', () => (hit.status = res.statusCode));
    const route = routes[path];
    if (route) route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: (p: string) => base + p,
    hits: (p?: string) => hits.filter((h) => p === undefined || h.path === p),
    maxOpen: (p: string) => maxOpen.get(p) ?? 0,
  };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
function rssOf(items: { guid: string; title: string; link?: string }[], extra = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>t</title><link>http://example.com/</link>${extra}${items
    .map(
      (i) =>
        `<item><title>${esc(i.title)}</title><guid>${esc(i.guid)}</guid>${i.link ? `<link>${esc(i.link)}</link>` : ''}</item>`,
    )
    .join('')}</channel></rss>`;
}

/** A feed that gains items when the test says so; with `etag`, it answers If-None-Match with 304. */
function growingFeed(opts: { etag: boolean }) {
  const items: { guid: string; title: string; link: string }[] = [];
  const feed = {
    items,
    add(title: string) {
      items.unshift({
        guid: `g-${items.length + 1}`,
        title,
        link: `https://example.com/a/${items.length + 1}?utm_source=feed`,
      });
    },
    route(req: IncomingMessage, res: ServerResponse) {
      const tag = `"v${items.length}"`;
      if (opts.etag && req.headers['if-none-match'] === tag) return void res.writeHead(304, { etag: tag }).end();
      res
        .writeHead(200, { 'content-type': 'application/rss+xml', ...(opts.etag ? { etag: tag } : {}) })
        .end(rssOf(items));
    },
  };
  return feed;
}

function poller(store: SqliteStore, extra: Partial<PollerOptions> = {}) {
  const reports: PollReport[] = [];
  const logs: string[] = [];
  const p = new SourcePoller({
    store: store.sources,
    tickMs: 50,
    registryCheckMs: 50,
    http: { timeoutMs: 2000, connectTimeoutMs: 1000 },
    // The feeds of these tests are on loopback (FEED_ALLOW_PRIVATE).
    allowPrivate: true,
    log: recordLog(logs),
    onPoll: (r) => reports.push(r),
    ...extra,
  });
  cleanups.push(() => p.stop());
  return { p, reports, logs };
}

const source = (store: SqliteStore, name: string, url: string, everyMs = 100) =>
  store.sources.add({ name, url, everyMs, urgency: 'auto' }, Date.now());
const get = async (store: SqliteStore, name: string): Promise<SourceRecord> => (await store.sources.get(name))!;
const contents = async (store: SqliteStore) =>
  (await store.articles.list({ afterMs: 0, limit: 100 })).map((a) => a.content).sort();

describe('a feed that gains items between polls: each new item is ingested exactly once, none again after a restart', () => {
  it('stores new items as they appear, and a restarted poller (feed without validators) stores nothing twice', async () => {
    const db = database();
    const feed = growingFeed({ etag: false });
    const srv = await feedServer({ '/feed': (q, s) => feed.route(q, s) });
    feed.add('Copper rises on supply worries');
    const store = db.open();
    await source(store, 'wire', srv.url('/feed'));
    const first = poller(store);
    await first.p.start();
    await until(async () => (await store.articles.count()) === 1, 'the first item');
    feed.add('Oil falls as stockpiles grow');
    feed.add('Gold steadies near record');
    await until(async () => (await store.articles.count()) === 3, 'the two new items');
    const polls = srv.hits('/feed').length;
    await until(() => srv.hits('/feed').length >= polls + 3, 'more polls of an unchanged feed');
    await first.p.stop();

    // A restart: another connection, another owner; the feed serves every item again (no ETag).
    const again = db.open();
    const second = poller(again);
    await second.p.start();
    const before = srv.hits('/feed').length;
    await until(() => srv.hits('/feed').length >= before + 3, 'polls after the restart');
    feed.add('Euro slips after German data');
    await until(async () => (await again.articles.count()) === 4, 'the item published after the restart');
    await until(() => srv.hits('/feed').length >= before + 6, 'further polls');
    expect(await contents(again)).toEqual([
      'Copper rises on supply worries',
      'Euro slips after German data',
      'Gold steadies near record',
      'Oil falls as stockpiles grow',
    ]);
    const rec = await get(again, 'wire');
    expect(rec.itemsIngested).toBe(4);
    expect(rec.itemsSeen).toBe(4);
    expect(rec.itemsDeduplicated).toBe(0);
    expect(rec.lastStatus).toBe(200);
  }, 30_000);
});

describe('a 304 costs nothing', () => {
  it('sends the stored ETag, stores nothing on 304 and does not call the store to ingest', async () => {
    const db = database();
    const feed = growingFeed({ etag: true });
    feed.add('Apple shares rise after earnings');
    const srv = await feedServer({ '/feed': (q, s) => feed.route(q, s) });
    const store = db.open();
    let ingestCalls = 0;
    const ingest = store.sources.ingestItems.bind(store.sources);
    store.sources.ingestItems = (items, at) => {
      ingestCalls++;
      return ingest(items, at);
    };
    await source(store, 'wire', srv.url('/feed'));
    const { p, reports } = poller(store);
    await p.start();
    await until(() => reports.filter((r) => r.outcome === 'not-modified').length >= 3, 'three 304s');
    expect(ingestCalls).toBe(1);
    const later = srv.hits('/feed').slice(1);
    expect(later.every((h) => h.ifNoneMatch === '"v1"' && h.status === 304)).toBe(true);
    const rec = await get(store, 'wire');
    expect(rec).toMatchObject({
      lastStatus: 304,
      etag: '"v1"',
      itemsIngested: 1,
      itemsSeen: 1,
      failures: 0,
      lastError: null,
    });
    // A change is fetched and stored once more.
    feed.add('Microsoft wins cloud contract');
    await until(async () => (await store.articles.count()) === 2, 'the new item after the 304s');
  }, 30_000);
});

describe('a broken source shows the truth and never delays a healthy one', () => {
  it('records status, error, failures and the next try; the healthy source keeps its schedule meanwhile', async () => {
    const db = database();
    const feed = growingFeed({ etag: false });
    feed.add('Nvidia extends rally');
    let slowAnswered = 0;
    const srv = await feedServer({
      '/ok': (q, s) => feed.route(q, s),
      '/500': (_q, s) => s.writeHead(500, { 'content-type': 'text/plain' }).end('boom'),
      // Answers only after the poller's total timeout (2 s): a hung publisher.
      '/slow': (_q, s) => void setTimeout(() => (slowAnswered++, s.writeHead(200).end(rssOf([]))), 4000),
    });
    const store = db.open();
    await source(store, 'slow', srv.url('/slow'));
    await source(store, 'broken', srv.url('/500'));
    await source(store, 'healthy', srv.url('/ok'));
    const { p, reports, logs } = poller(store, { concurrency: 3 });
    await p.start();
    await until(() => reports.some((r) => r.source === 'slow'), 'the slow source to time out');
    // While the slow source's one poll was waiting, the healthy one was polled several times.
    const slowDone = reports.findIndex((r) => r.source === 'slow');
    expect(reports.slice(0, slowDone).filter((r) => r.source === 'healthy').length).toBeGreaterThanOrEqual(3);
    expect(slowAnswered).toBe(0);
    expect(reports[slowDone]).toMatchObject({ outcome: 'error', status: null, failures: 1 });
    expect(reports[slowDone]!.error).toMatch(/^timeout: /);

    const broken = await get(store, 'broken');
    expect(broken.lastStatus).toBe(500);
    expect(broken.lastError).toMatch(/^http: .*500/);
    expect(broken.failures).toBeGreaterThanOrEqual(1);
    expect(Date.parse(broken.nextPollAt!)).toBeGreaterThan(Date.parse(broken.lastPollAt!));
    expect(broken.itemsIngested).toBe(0);
    expect((await get(store, 'healthy')).lastError).toBeNull();
    expect(await contents(store)).toEqual(['Nvidia extends rally']);
    // One log line per change of state, not one per poll.
    await until(async () => (await get(store, 'broken')).failures >= 3, 'three failures of the broken source');
    expect(logs.filter((l) => l.includes('broken')).length).toBe(1);
  }, 30_000);

  it('backs off exponentially: the gaps between failing polls grow', async () => {
    const db = database();
    const srv = await feedServer({ '/500': (_q, s) => s.writeHead(503).end() });
    const store = db.open();
    await source(store, 'broken', srv.url('/500'), 50);
    const { p } = poller(store, { random: () => 1 });
    await p.start();
    await until(() => srv.hits('/500').length >= 5, 'five polls', 20_000);
    const times = srv.hits('/500').map((h) => h.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[3]!).toBeGreaterThan(gaps[0]!);
  }, 30_000);
});

describe('the poll and item counters', () => {
  it('count every poll by its outcome (an error by its kind) and the items by what became of them', async () => {
    const db = database();
    const feed = growingFeed({ etag: true });
    feed.add('Gold climbs to a record');
    const srv = await feedServer({
      '/feed': (q, s) => feed.route(q, s),
      '/mixed': (_q, s) =>
        s.writeHead(200, { 'content-type': 'application/rss+xml' }).end(
          rssOf([
            { guid: 'm-1', title: 'Tin slips' },
            { guid: 'm-2', title: '' },
          ]),
        ),
      '/500': (_q, s) => s.writeHead(500).end(),
      '/big': (_q, s) =>
        s
          .writeHead(200, { 'content-type': 'application/rss+xml' })
          .end(rssOf([{ guid: 'b', title: 'x'.repeat(4000) }])),
      '/page': (_q, s) => s.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not a feed</body></html>'),
    });
    const store = db.open();
    for (const name of ['feed', 'mixed', '500', 'big', 'page']) await source(store, name, srv.url(`/${name}`));
    const polls = new Map<string, number>();
    const items = new Map<string, number>();
    const metrics: PollerOptions['metrics'] = {
      sourcePolls: { inc: ({ outcome }) => void polls.set(outcome, (polls.get(outcome) ?? 0) + 1) },
      sourceItems: { inc: ({ outcome }, n) => void items.set(outcome, (items.get(outcome) ?? 0) + n) },
    };
    const { p } = poller(store, { metrics, http: { timeoutMs: 2000, connectTimeoutMs: 1000, maxBytes: 2000 } });
    await p.start();
    const kinds = ['ok', 'not_modified', 'http', 'too_large', 'parse'];
    await until(() => kinds.every((k) => polls.has(k)), 'a poll of every outcome');
    expect([...polls.keys()].sort()).toEqual([...kinds].sort());
    // Stored once each; the item without text is unusable once (at its first poll); a re-read item is the same item.
    expect(items.get('stored')).toBe(2);
    expect(items.get('unusable')).toBe(1);
    expect([...items.keys()].every((k) => ['stored', 'unusable', 'same_item'].includes(k))).toBe(true);
  }, 30_000);
});

describe('429 with Retry-After is respected', () => {
  it('schedules the next poll no sooner than Retry-After says and sends nothing before it', async () => {
    const db = database();
    const srv = await feedServer({
      '/limited': (_q, s) => s.writeHead(429, { 'retry-after': '120' }).end(),
      '/neighbour': (_q, s) => s.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rssOf([])),
    });
    const store = db.open();
    await source(store, 'limited', srv.url('/limited'));
    const { p } = poller(store);
    await p.start();
    await until(() => srv.hits('/limited').length === 1, 'the first poll');
    await until(async () => (await get(store, 'limited')).lastStatus === 429, 'the 429 recorded');
    const rec = await get(store, 'limited');
    expect(Date.parse(rec.nextPollAt!) - Date.parse(rec.lastPollAt!)).toBeGreaterThanOrEqual(120_000);
    // A neighbour on the same interval (100 ms) is polled five more times meanwhile: the poller is
    // running, and the limited source still had one request.
    await source(store, 'neighbour', srv.url('/neighbour'));
    await until(() => srv.hits('/neighbour').length >= 5, 'five polls of the neighbour');
    expect(srv.hits('/limited').length).toBe(1);
  }, 30_000);
});

describe('two pollers on one store never poll one source at once', () => {
  // Two sources per poller at a time: a single poller with room for all four would keep them (its timer is
  // exact for the sources it polled), and the lease would never be contested.
  it('each source has at most one request in flight, while both pollers take part', async () => {
    const db = database();
    const slowFeed = (_q: IncomingMessage, s: ServerResponse) =>
      void setTimeout(() => s.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rssOf([])), 150);
    const paths = ['/a', '/b', '/c', '/d'];
    const srv = await feedServer(Object.fromEntries(paths.map((p) => [p, slowFeed])));
    const a = db.open();
    const b = db.open();
    for (const path of paths) await source(a, path.slice(1), srv.url(path), 20);
    const one = poller(a, { userAgent: 'poller-A', concurrency: 2 });
    const two = poller(b, { userAgent: 'poller-B', concurrency: 2 });
    await Promise.all([one.p.start(), two.p.start()]);
    await until(() => paths.every((p) => srv.hits(p).length >= 8), 'eight polls of every source', 20_000);
    for (const p of paths) expect(srv.maxOpen(p), p).toBe(1);
    const agents = new Set(srv.hits().map((h) => h.userAgent));
    expect(agents).toEqual(new Set(['poller-A', 'poller-B']));
  }, 30_000);
});

describe('pause, resume and remove reach a running poller within a second', () => {
  it('no poll starts more than a second after the pause (made on another connection, as the CLI does)', async () => {
    const db = database();
    const empty = (_q: IncomingMessage, s: ServerResponse) =>
      void s.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rssOf([]));
    const srv = await feedServer({ '/feed': empty, '/control': empty });
    const store = db.open();
    const cli = db.open();
    await source(store, 'wire', srv.url('/feed'), 50);
    // A second source on the same poller, never paused: its polls show the poller running past the bound.
    await source(store, 'control', srv.url('/control'), 50);
    const { p } = poller(store);
    await p.start();
    await until(() => srv.hits('/feed').length >= 3, 'three polls');
    await cli.sources.setPaused('wire', true, Date.now());
    const pausedAt = Date.now();
    await until(
      () => srv.hits('/control').some((h) => h.at > pausedAt + 1200),
      'the control source polled past the bound',
    );
    const after = srv.hits('/feed').filter((h) => h.at > pausedAt);
    expect(after.every((h) => h.at - pausedAt <= 1000)).toBe(true);
    expect(srv.hits('/feed').filter((h) => h.at > pausedAt + 1000)).toEqual([]);

    await cli.sources.setPaused('wire', false, Date.now());
    const resumedAt = Date.now();
    await until(() => srv.hits('/feed').some((h) => h.at > resumedAt), 'a poll after the resume');
    await cli.sources.remove('wire');
    const removedAt = Date.now();
    await until(
      () => srv.hits('/control').some((h) => h.at > removedAt + 1200),
      'the control source polled past the bound',
    );
    expect(srv.hits('/feed').filter((h) => h.at > removedAt + 1000)).toEqual([]);
  }, 30_000);

  it('a source added while the poller runs is polled within a second', async () => {
    const db = database();
    const srv = await feedServer({
      '/feed': (_q, s) =>
        s
          .writeHead(200, { 'content-type': 'application/rss+xml' })
          .end(rssOf([{ guid: '1', title: 'Tesla recalls cars' }])),
    });
    const store = db.open();
    const { p } = poller(store, { tickMs: 60_000 });
    await p.start();
    const addedAt = Date.now();
    await source(db.open(), 'late', srv.url('/feed'), 60_000);
    await until(() => srv.hits('/feed').length === 1, 'the first poll of the new source');
    expect(srv.hits('/feed')[0]!.at - addedAt).toBeLessThanOrEqual(1000);
  }, 30_000);
});

describe('stop gives the sources it holds back', () => {
  it('another poller claims a source at once after the holder stopped mid-poll', async () => {
    const db = database();
    const srv = await feedServer({ '/hang': () => {} });
    const a = db.open();
    await source(a, 'hang', srv.url('/hang'));
    const first = poller(a, { http: { timeoutMs: 60_000, connectTimeoutMs: 1000 } });
    await first.p.start();
    await until(() => srv.hits('/hang').length === 1, 'the first request');
    await first.p.stop();
    // The lease was released: a claim now (well within the lease of POLL_DEFAULTS.leaseMs) gets it.
    const claimed = await db.open().sources.claimDue('other', Date.now(), 1000, 10);
    expect(claimed.map((s) => s.name)).toEqual(['hang']);
    expect((await get(a, 'hang')).failures).toBe(0);
  }, 30_000);
});

describe('a poller stopped and started again watches the registry once', () => {
  it('a registry check still waiting on the store when the poller restarts ends with the run that made it', async () => {
    vi.useFakeTimers();
    try {
      let checks = 0;
      let release = () => {};
      const store = {
        registryVersion: () => {
          checks++;
          // The first timed check waits on the store until after the restart.
          return checks === 2 ? new Promise<number>((r) => (release = () => r(1))) : Promise.resolve(1);
        },
        claimDue: () => Promise.resolve([]),
        pruneSeen: () => Promise.resolve(0),
      } as unknown as SourceStore;
      const p = new SourcePoller({ store, registryCheckMs: 100, tickMs: 60_000 });
      await p.start();
      await vi.advanceTimersByTimeAsync(100);
      expect(checks).toBe(2);
      await p.stop();
      await p.start();
      release();
      const before = checks;
      await vi.advanceTimersByTimeAsync(1000);
      // One watch checks every 100 ms: 10 checks in a second (20 if the old run's watch went on too).
      expect(checks - before).toBe(10);
      await p.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the poller is a good HTTP citizen', () => {
  it('names the service, its version and the brand in the User-Agent', async () => {
    const db = database();
    const srv = await feedServer({
      '/feed': (_q, s) => s.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rssOf([])),
    });
    const store = db.open();
    await source(store, 'wire', srv.url('/feed'));
    const { p } = poller(store, { userAgent: pollerUserAgent('acme') });
    await p.start();
    await until(() => srv.hits('/feed').length >= 1, 'a poll');
    expect(srv.hits('/feed')[0]!.userAgent).toMatch(/^FinancialNewsService\/\d+\.\d+\.\d+ \(acme; feed poller\)$/);
  }, 30_000);

  it("honours the feed's ttl as a floor on the interval", async () => {
    const db = database();
    const srv = await feedServer({
      '/feed': (_q, s) => s.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rssOf([], '<ttl>15</ttl>')),
    });
    const store = db.open();
    await source(store, 'wire', srv.url('/feed'), 100);
    const { p, reports } = poller(store);
    await p.start();
    await until(() => reports.length === 1, 'a poll');
    const rec = await get(store, 'wire');
    expect(rec.minIntervalMs).toBe(15 * 60_000);
    expect(Date.parse(rec.nextPollAt!) - Date.parse(rec.lastPollAt!)).toBe(15 * 60_000);
  }, 30_000);
});

describe('the schedule rules', () => {
  const now = Date.parse('2026-11-22T00:00:00Z');
  it('after a success: the interval, or the feed floor when longer, the floor capped', () => {
    expect(nextPollAfterSuccess(now, 30_000, null)).toBe(now + 30_000);
    expect(nextPollAfterSuccess(now, 30_000, 10_000)).toBe(now + 30_000);
    expect(nextPollAfterSuccess(now, 30_000, 3_600_000)).toBe(now + 3_600_000);
    expect(nextPollAfterSuccess(now, 30_000, 7 * 86_400_000)).toBe(now + POLL_DEFAULTS.feedFloorMaxMs);
  });
  it('after failures: never sooner than the interval, growing, capped; Retry-After wins when longer, capped', () => {
    const delays = [1, 2, 3, 4, 5, 20].map((f) => nextPollAfterFailure(now, 10_000, f, null, () => 1) - now);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(10_000);
    for (let i = 1; i < delays.length; i++) expect(delays[i]!).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(delays[4]!).toBeGreaterThan(delays[0]!);
    expect(delays.at(-1)!).toBeLessThanOrEqual(POLL_DEFAULTS.backoffMaxMs);
    expect(nextPollAfterFailure(now, 10_000, 1, 600_000, () => 1) - now).toBeGreaterThanOrEqual(600_000);
    expect(nextPollAfterFailure(now, 10_000, 1, 365 * 86_400_000, () => 1) - now).toBe(POLL_DEFAULTS.retryAfterMaxMs);
  });
});

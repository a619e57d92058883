/**
 * Outside text is never looked up in an object with a prototype: every name Object.prototype has
 * (`constructor`, `__proto__`, `toString`, `hasOwnProperty`, `__defineGetter__`, ...) is an ordinary
 * word, symbol, source name or query term, on every door (the text rules, `fns articles ingest`, the
 * admin push, a polled feed) and in the REST queries that read it back. One describe per path.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { articleRules } from '../../src/contract/index.js';
import { ingest } from '../../src/cli/operator.js';
import { isNearDuplicate, nearDuplicateKeys, prepare } from '../../src/dedup/near.js';
import { SOURCE_NAME } from '../../src/domain/source-name.js';
import { enrich } from '../../src/enrich/index.js';
import { operatorOffer, storeOffers } from '../../src/ingest/pipeline.js';
import { startAdminServer, type AdminServer } from '../../src/ops/admin.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { decodeFeedBytes } from '../../src/sources/feed/charset.js';
import { parseFeed, SourcePoller } from '../../src/sources/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { get, startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';
import { title } from './support.js';
import { silentLog } from '../../src/domain/log.js';

/** Every own name of Object.prototype. */
const NAMES = Object.getOwnPropertyNames(Object.prototype);
/** Those that are source names too (`constructor`, `toString`; not `__proto__`). */
const SOURCE_NAMES = NAMES.filter((n) => SOURCE_NAME.test(n));
/** Those whose capitals are symbols (`CONSTRUCTOR`, `VALUEOF`). */
const SYMBOLS = NAMES.map((n) => n.toUpperCase()).filter((t) => articleRules.tickerPattern.test(t));
const capital = (n: string) => n.replace(/^_*./, (c) => c.toUpperCase());

/**
 * Headlines that put `n` where each text rule reads a word: a place, a span, a symbol, a name, a figure's neighbour.
 */
const headlinesWith = (n: string) => [
  n,
  `${n} ${n}`,
  `Apple ${n} rises 5% after weekly gain`,
  `${capital(n)} shares fall as ECB cuts rates`,
  `${n.toUpperCase()} jumps on ${n} deal with Microsoft`,
  `$${n.toUpperCase()} and NASDAQ:${n.toUpperCase()} rally; ${n}'s Q3 profit beats`,
  `Fed's ${capital(n)} says ${n} inflation cools in the ${n} month`,
];

/** A distinct story per name (the words of test/ingest/support.ts), so none is a near-duplicate of another. */
const storyOf = (n: string, i: number) => `${capital(n)} ${title(i)}`;

/** One operator line per name: its word in the content; as source and symbol where the contract allows. */
const operatorLines = () =>
  NAMES.map((n, i) =>
    JSON.stringify({
      content: storyOf(n, i),
      ...(SOURCE_NAME.test(n) ? { source: n } : {}),
      ...(articleRules.tickerPattern.test(n.toUpperCase())
        ? { tickers: [{ ticker: n.toUpperCase(), sentiment: 'positive', relevance: 1 }] }
        : {}),
      url: `https://example.com/${n}/${i}`,
    }),
  );

describe('the text rules (near-duplicate keys, similarity, enrichment) read every Object.prototype name as a word', () => {
  it('prepares, keys, compares and enriches each headline; every token is text', () => {
    for (const n of NAMES) {
      for (const h of headlinesWith(n)) {
        const p = prepare(h);
        for (const t of [...p.tokens, ...p.words, ...p.sequence, ...p.entities, ...p.places])
          expect(typeof t, `${h}: ${String(t)}`).toBe('string');
        const keys = nearDuplicateKeys(h);
        expect(keys.length).toBeGreaterThan(0);
        for (const k of keys) expect(typeof k).toBe('string');
        expect(isNearDuplicate(h, h)).toBe(true);
        expect(typeof isNearDuplicate(h, `${h} today`)).toBe('boolean');
        const e = enrich(h);
        for (const t of e.tickers) expect(t.ticker).toMatch(articleRules.tickerPattern);
      }
    }
  });
  it('a headline holding the word is one story with its copy from another wire, and not with another story', () => {
    for (const n of NAMES) {
      expect(
        isNearDuplicate(
          `${capital(n)} shares jump 12% after record profit`,
          `${capital(n)} shares jump 12% after record profit - Reuters`,
        ),
      ).toBe(true);
      expect(
        isNearDuplicate(
          `${capital(n)} shares jump 12% after record profit`,
          `Oil falls as stockpiles grow in ${n} port`,
        ),
      ).toBe(false);
    }
  });
});

describe('fns articles ingest stores lines whose words, sources and symbols are Object.prototype names', () => {
  it('every line is stored and read back as written; a field of such a name is refused by name', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const lines = operatorLines();
      const report = await ingest(store.sources, lines, () => 1_800_000_000_000);
      expect(report.errors).toEqual([]);
      expect(report.ingested).toBe(NAMES.length);
      const stored = await store.articles.getMany(report.ids);
      NAMES.forEach((n, i) => {
        const a = stored[i]!;
        expect(a.content).toBe(storyOf(n, i));
        expect(a.source).toBe(SOURCE_NAME.test(n) ? n : null);
        if (articleRules.tickerPattern.test(n.toUpperCase()))
          expect(a.tickers).toEqual([{ ticker: n.toUpperCase(), sentiment: 'positive', relevance: 1 }]);
      });
      // The same lines again: each one a duplicate of its stored article.
      const again = await ingest(store.sources, lines, () => 1_800_000_060_000);
      expect(again.ingested).toBe(0);
      expect(again.duplicates.map((d) => d.id)).toEqual(report.ids);
      // Names as fields: unknown fields, each refused by its name.
      const fields = await ingest(
        store.sources,
        NAMES.map((n) => `{"content":"Acme beats estimates","${n}":"x"}`),
        () => 1_800_000_120_000,
      );
      expect(fields.errors.map((e) => e.error)).toEqual(NAMES.map((n) => `unknown field(s): ${n}`));
    } finally {
      store.close();
    }
  });
  it('the pipeline answers each line stored (operatorOffer, storeOffers)', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const offers = operatorLines().map((l, i) => operatorOffer(i + 1, l));
      const answer = await storeOffers(offers, store.sources, () => 1_800_000_000_000);
      expect(answer).toMatchObject({ stored: NAMES.length, duplicates: 0, invalid: 0 });
    } finally {
      store.close();
    }
  });
});

describe('the admin push stores lines whose sources, ids, words and symbols are Object.prototype names', () => {
  const TOKEN = 'test-admin-token-0123456789abcdef';
  let admin: AdminServer;
  let store: SqliteStore;
  beforeAll(async () => {
    store = new SqliteStore(':memory:');
    admin = await startAdminServer({
      port: 0,
      checks: [],
      metrics: createMetrics({ defaultMetrics: false }),
      log: silentLog,
      push: { token: TOKEN, store: store.sources, clock: Date.now },
    });
  });
  afterAll(async () => {
    await admin.close();
    store.close();
  });
  const push = async (lines: object[]) => {
    const res = await fetch(`${admin.url}/admin/v1/articles`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/x-ndjson' },
      body: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('every line is stored under its source and id, and read back as pushed', async () => {
    const lines = NAMES.map((n, i) => ({
      source: SOURCE_NAME.test(n) ? n : 'desk',
      id: n,
      title: storyOf(n, i),
      ...(articleRules.tickerPattern.test(n.toUpperCase()) ? { tickers: [n.toUpperCase()] } : {}),
    }));
    const a = await push(lines);
    expect(a.status).toBe(200);
    expect(a.body.results.map((r: any) => r.status)).toEqual(NAMES.map(() => 'stored'));
    expect(a.body.results.map((r: any) => r.external_id)).toEqual(NAMES);
    const stored = await store.articles.getMany(a.body.results.map((r: any) => r.id));
    expect(stored.map((s) => s.content)).toEqual(NAMES.map(storyOf));
    // Idempotent by (source, id) for these names too.
    const again = await push(lines);
    expect(again.body.results.map((r: any) => r.reason)).toEqual(NAMES.map(() => 'same-item'));
  });
  it('a field of such a name is refused by its name', async () => {
    const a = await push(
      NAMES.map((n, i) => JSON.parse(`{"source":"desk","id":"f-${i}","content":"Acme beats estimates","${n}":"x"}`)),
    );
    expect(a.body.results.map((r: any) => r.error)).toEqual(NAMES.map((n) => `unknown field(s): ${n}`));
  });
});

describe('a polled feed whose items and source names are Object.prototype names is stored item by item', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('each source named so stores each item titled so', async () => {
    const items = NAMES.map(
      (n, i) =>
        `<item><title>${storyOf(n, i).replace(/&/g, '&amp;')}</title><guid>${n}</guid><link>https://example.com/${n}</link><category>${n}</category></item>`,
    ).join('');
    const rss = `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>${NAMES.join(' ')}</title><link>http://example.com/</link>${items}</channel></rss>`;
    const server = createServer((req, res) => {
      const name = (req.url ?? '/').slice(1);
      // Each source its own copy of the feed, its stories kept apart by the source's name.
      res
        .writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' })
        .end(rss.replace(/https:\/\/example\.com\//g, `https://example.com/${name}/`));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = new SqliteStore(':memory:');
    cleanups.push(() => store.close());
    for (const n of SOURCE_NAMES)
      await store.sources.add({ name: n, url: `${base}/${n}`, everyMs: 60_000, urgency: 'auto' }, Date.now());
    const poller = new SourcePoller({
      store: store.sources,
      tickMs: 50,
      registryCheckMs: 50,
      http: { timeoutMs: 2000, connectTimeoutMs: 1000 },
      allowPrivate: true,
      log: silentLog,
    });
    cleanups.push(() => poller.stop());
    await poller.start();
    await until(
      async () =>
        (await Promise.all(SOURCE_NAMES.map(async (n) => (await store.sources.get(n))?.lastPollAt != null))).every(
          Boolean,
        ),
      'a poll of every source',
    );
    for (const n of SOURCE_NAMES) {
      const rec = (await store.sources.get(n))!;
      expect(rec.lastError, n).toBeNull();
    }
    // The first source stores every item; the others carry the same stories (same guid text, another link, same
    // headline: near-duplicates).
    const list = await store.articles.list({ afterMs: 0, limit: 100 });
    expect(list.map((a) => a.content).sort()).toEqual(NAMES.map(storyOf).sort());
  });

  it('a syndication period or a charset of such a name is no period and no charset', () => {
    for (const n of NAMES) {
      const feed = parseFeed(
        Buffer.from(
          `<?xml version="1.0"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>t</title><sy:updatePeriod>${n}</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency><item><title>x</title></item></channel></rss>`,
        ),
        { baseUrl: 'https://example.com/feed' },
      );
      expect(feed.minIntervalSeconds, n).toBeNull();
      let message = '';
      try {
        decodeFeedBytes(Buffer.from('<rss>caf\xe9</rss>', 'latin1'), `text/xml; charset=${n}`);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, n).toBe(`unsupported charset "${n.toLowerCase()}"`);
    }
  });
});

describe('REST reads back such articles: q and tickers of these names are answered, never a 5xx', () => {
  let svc: TestService;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService();
    key = (await svc.key('max')).key;
    const offers = operatorLines().map((l, i) => operatorOffer(i + 1, l));
    const answer = await storeOffers(offers, svc.store.sources, () => svc.clock.now - 60_000);
    expect(answer.stored).toBe(NAMES.length);
    await svc.worker.drain();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('search finds the article of each name by that name', async () => {
    for (const [i, n] of NAMES.entries()) {
      const r = await get(svc.port, `/v1/news/search?q=${encodeURIComponent(n)}&limit=50`, { key });
      expect(r.status, n).toBe(200);
      expect(
        r.body.articles.map((a: any) => a.content),
        n,
      ).toContain(storyOf(n, i));
    }
    const all = await get(svc.port, `/v1/news/search?q=${encodeURIComponent(NAMES.join(' '))}&limit=50`, { key });
    expect(all.status).toBe(200);
  });
  it('tickers of these names filter the list: a symbol finds its article, a lower-case name is a 400 naming tickers', async () => {
    for (const t of SYMBOLS) {
      const r = await get(svc.port, `/v1/news?tickers=${encodeURIComponent(t)}`, { key });
      expect(r.status, t).toBe(200);
      expect(
        r.body.articles.map((a: any) => a.tickers[0]?.ticker),
        t,
      ).toEqual([t]);
    }
    const all = await get(svc.port, `/v1/news?tickers=${SYMBOLS.join(',')}`, { key });
    expect(all.body.articles).toHaveLength(SYMBOLS.length);
    for (const n of NAMES.filter((x) => !articleRules.tickerPattern.test(x))) {
      const r = await get(svc.port, `/v1/news?tickers=${encodeURIComponent(n)}`, { key });
      expect(r.status, n).toBe(400);
      expect(r.body.detail).toMatch(/^tickers/);
    }
  });
  it('a query parameter of such a name is a 400 naming it', async () => {
    for (const n of NAMES) {
      const r = await get(svc.port, `/v1/news?${encodeURIComponent(n)}=1`, { key });
      expect(r.status, n).toBe(400);
      expect(r.body.detail, n).toContain(n);
    }
  });
});

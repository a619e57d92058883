/**
 * The dispatcher against a loopback receiver, on the embedded store: order, signatures (checked by an
 * independent implementation), presentation per tier, failures and retries, timeouts, 410, the ticker
 * filter, a downgraded account (a ticker filter kept across plan changes), an answer decided by its
 * status line, the bound on signing secrets, the 24 h give-up (on a fake clock) and refused destinations. The retry
 * delays are shortened by injection; every test waits on the receiver's requests or on the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { NewArticle, WebhookEndpoint } from '../../src/store/ports/index.js';
import type { Tier } from '../../src/contract/index.js';
import { PREVIOUS_SECRETS_MAX } from '../../src/domain/webhook-secrets.js';
import {
  httpSender,
  newEndpointId,
  newSecret,
  SecretBox,
  WebhookDispatcher,
  type AttemptEvent,
  type DispatcherOptions,
  type RetryRules,
} from '../../src/webhooks/index.js';
import { independentlyVerified, startReceiver, type Answer, type Receiver } from './receiver.js';
import { until as waitUntil } from '../support/wait.js';
import { silentLog } from '../../src/domain/log.js';

const DAY = 24 * 3600_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const FAST: RetryRules = { scheduleMs: [20, 20, 20], everyMs: 20, jitterRatio: 0.2, giveUpAfterMs: 24 * 3600_000 };
const box = new SecretBox();

function article(content: string, tickers: string[] = []): NewArticle {
  return {
    content,
    urgency: 'regular',
    sentiment: null,
    published_at: null,
    tickers: tickers.map((ticker) => ({ ticker, sentiment: 'neutral' as const })),
  };
}

async function setup(
  opts: {
    tier?: Tier;
    answer?: (n: number) => Answer;
    tickers?: string[] | null;
    minRelevance?: number;
    dispatcher?: Partial<DispatcherOptions>;
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'fns-wh-'));
  const store = new SqliteStore(join(dir, 'fns.sqlite'));
  const receiver = await startReceiver(opts.answer);
  const account = await store.accounts.createAccount(opts.tier ?? 'pro', Date.now());
  const secret = newSecret();
  const endpoint = await store.webhooks.add(
    {
      id: newEndpointId(),
      accountId: account.id,
      url: receiver.url,
      tickers: opts.tickers ?? null,
      minRelevance: opts.minRelevance ?? null,
      secret: box.seal(secret),
    },
    Date.now(),
  );
  const events: AttemptEvent[] = [];
  const waiters: { pred: (e: AttemptEvent) => boolean; resolve: () => void }[] = [];
  const dispatcher = new WebhookDispatcher({
    store,
    secrets: box,
    allowPrivate: true,
    recheckMs: 60_000,
    retryRules: FAST,
    feedPollMs: 10,
    refreshMs: 50,
    flushMs: 10,
    log: silentLog,
    onAttempt: (e) => {
      events.push(e);
      for (const w of waiters.filter((w) => w.pred(e))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    ...opts.dispatcher,
  });
  const attempt = (pred: (e: AttemptEvent) => boolean) =>
    new Promise<void>((resolve) => waiters.push({ pred, resolve }));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  cleanups.push(() => receiver.close());
  cleanups.push(() => dispatcher.stop());
  await dispatcher.start();
  return { store, receiver, account, secret, endpoint, dispatcher, events, attempt };
}

/** Waits until `pred` holds for the endpoint as stored (the store is the observable outcome here). */
async function until(store: SqliteStore, id: string, pred: (e: WebhookEndpoint) => boolean): Promise<WebhookEndpoint> {
  let e: WebhookEndpoint | undefined;
  const holds = async () => {
    e = await store.webhooks.get(id);
    return e !== undefined && pred(e);
  };
  // Read again at once (a state between two attempts is short-lived).
  await waitUntil(holds, `endpoint ${id}: ${pred.toString()}`, 10_000, 0);
  return e!;
}

const bodies = (r: Receiver) =>
  r.received.map((x) => JSON.parse(x.body) as { type: string; timestamp: string; data: Record<string, unknown> });

describe('delivery: every article stored after the endpoint was added, in order, signed', () => {
  it('posts article.created with the Article as a pro account sees it, each verifiable with the secret', async () => {
    const { store, receiver, secret } = await setup({ tier: 'pro' });
    await store.articles.insert([article('one', ['AAPL'])], Date.now());
    await store.articles.insert([article('two'), article('three')], Date.now());
    const got = await receiver.waitFor(3);
    expect(bodies(receiver).map((b) => b.data.content)).toEqual(['one', 'two', 'three']);
    for (const r of got) {
      expect(independentlyVerified(secret, r.headers, r.body)).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toMatch(/^msg_[0-9A-Za-z]+$/);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
    const b = bodies(receiver)[0]!;
    expect(b.type).toBe('article.created');
    expect(b.timestamp).toBe(b.data.received_at);
    expect(b.data).not.toHaveProperty('tickers');
  });

  it('a max account gets tickers; its ticker filter skips other articles (the cursor still moves past them)', async () => {
    const { store, receiver, endpoint } = await setup({ tier: 'max', tickers: ['MSFT'] });
    await store.articles.insert(
      [article('apple', ['AAPL']), article('microsoft', ['MSFT']), article('none')],
      Date.now(),
    );
    await store.articles.insert([article('microsoft again', ['MSFT'])], Date.now());
    await receiver.waitFor(2);
    expect(bodies(receiver).map((b) => [b.data.content, b.data.tickers])).toEqual([
      ['microsoft', [{ ticker: 'MSFT', sentiment: 'neutral', relevance: 1 }]],
      ['microsoft again', [{ ticker: 'MSFT', sentiment: 'neutral', relevance: 1 }]],
    ]);
    const latest = await store.articles.latestSeq();
    await until(store, endpoint.id, (e) => e.cursor === latest);
  });

  it("its ticker filter applies a minimum relevance: the contract default, or the endpoint's own", async () => {
    const graded = (content: string, relevance: number): NewArticle => ({
      ...article(content),
      tickers: [{ ticker: 'MSFT', sentiment: 'neutral', relevance }],
    });
    for (const [minRelevance, want] of [
      [undefined, ['about', 'lead']],
      [0.9, ['lead']],
      [0, ['passing', 'about', 'lead']],
    ] as const) {
      const { store, receiver, endpoint } = await setup({
        tier: 'max',
        tickers: ['MSFT'],
        ...(minRelevance === undefined ? {} : { minRelevance }),
      });
      expect(endpoint.minRelevance).toBe(minRelevance ?? null);
      await store.articles.insert([graded('passing', 0.3), graded('about', 0.8), graded('lead', 1)], Date.now());
      await receiver.waitFor(want.length);
      const latest = await store.articles.latestSeq();
      await until(store, endpoint.id, (e) => e.cursor === latest);
      expect(bodies(receiver).map((b) => b.data.content)).toEqual(want);
    }
  });
});

describe('an article the ticker filter skips is no attempt: list shows the last request really answered', () => {
  it('after skipped articles the last success and last attempt are still those of the last delivery', async () => {
    const { store, receiver, endpoint } = await setup({ tier: 'max', tickers: ['MSFT'] });
    await store.articles.insert([article('microsoft', ['MSFT'])], Date.now());
    await receiver.waitFor(1);
    const delivered = await until(store, endpoint.id, (e) => e.lastSuccessAt !== null);
    await new Promise((r) => setTimeout(r, 30));
    await store.articles.insert([article('apple', ['AAPL']), article('none')], Date.now());
    const latest = await store.articles.latestSeq();
    const skipped = await until(store, endpoint.id, (e) => e.cursor === latest);
    expect(receiver.received).toHaveLength(1);
    expect(skipped.lastSuccessAt).toBe(delivered.lastSuccessAt);
    expect(skipped.lastAttemptAt).toBe(delivered.lastAttemptAt);
  });
});

describe("a failing receiver's answer is kept as the error without NUL characters (no store could record it)", () => {
  it('500 "bad\\0thing" is the error "HTTP 500: badthing"', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500).end('bad\u0000thing'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const { port } = server.address() as AddressInfo;
    const r = await httpSender({
      url: new URL(`http://127.0.0.1:${port}/hook`),
      address: { address: '127.0.0.1', family: 4 },
      headers: {},
      body: '{}',
      timeoutMs: 5_000,
    });
    expect(r).toMatchObject({ status: 500, error: 'HTTP 500: badthing' });
  });
});

describe('no endpoint held: the feed is not read, and an endpoint held later misses nothing', () => {
  /** A dispatcher whose reads of the article feed are counted (pages read; looks at the feed's end). */
  async function counted() {
    const dir = mkdtempSync(join(tmpdir(), 'fns-wh-'));
    const store = new SqliteStore(join(dir, 'fns.sqlite'));
    const receiver = await startReceiver();
    const reads = { pages: 0, looks: 0 };
    const articles = Object.assign(Object.create(store.articles) as typeof store.articles, {
      feedAfter: (seq: number, limit: number) => (reads.pages++, store.articles.feedAfter(seq, limit)),
      latestSeq: () => (reads.looks++, store.articles.latestSeq()),
    });
    const dispatcher = new WebhookDispatcher({
      store: {
        accounts: store.accounts,
        webhooks: store.webhooks,
        transaction: store.transaction.bind(store),
        articles,
      },
      secrets: box,
      allowPrivate: true,
      recheckMs: 60_000,
      retryRules: FAST,
      feedPollMs: 10,
      refreshMs: 50,
      flushMs: 10,
      log: silentLog,
    });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanups.push(() => store.close());
    cleanups.push(() => receiver.close());
    cleanups.push(() => dispatcher.stop());
    await dispatcher.start();
    const addEndpoint = async () => {
      const account = await store.accounts.createAccount('pro', Date.now());
      return store.webhooks.add(
        { id: newEndpointId(), accountId: account.id, url: receiver.url, tickers: null, secret: box.seal(newSecret()) },
        Date.now(),
      );
    };
    /** Waits until the feed's poller has been round at least `n` more times (looked at the end, or read a page). */
    const rounds = async (n: number) => {
      const before = reads.looks + reads.pages;
      await waitUntil(() => reads.looks + reads.pages >= before + n, 'the feed poller going round');
    };
    return { store, receiver, dispatcher, reads, addEndpoint, rounds };
  }

  it('articles stored while no endpoint exists cost no page read; an endpoint added then gets every article after it, in order', async () => {
    const { store, receiver, dispatcher, reads, addEndpoint, rounds } = await counted();
    for (let i = 0; i < 5; i++) await store.articles.insert([article(`before ${i}`)], Date.now());
    await rounds(3);
    expect(reads.pages).toBe(0);
    await addEndpoint();
    await waitUntil(() => dispatcher.endpoints() === 1, 'the endpoint held');
    for (let i = 0; i < 3; i++) await store.articles.insert([article(`after ${i}`)], Date.now());
    await receiver.waitFor(3);
    expect(bodies(receiver).map((b) => b.data.content)).toEqual(['after 0', 'after 1', 'after 2']);
  });

  it('an endpoint paused while articles arrive gets them once resumed: the skipped stretch is read from the store, not from the recent pages', async () => {
    const { store, receiver, dispatcher, addEndpoint, rounds } = await counted();
    const endpoint = await addEndpoint();
    await waitUntil(() => dispatcher.endpoints() === 1, 'the endpoint held');
    await store.articles.insert([article('one')], Date.now());
    await receiver.waitFor(1);
    await store.webhooks.setState(endpoint.id, 'paused', 'paused by the test', Date.now());
    await waitUntil(() => dispatcher.endpoints() === 0, 'the endpoint dropped');
    await store.articles.insert([article('two'), article('three')], Date.now());
    await rounds(3); // the poller moved past them with no endpoint held
    await store.webhooks.setState(endpoint.id, 'active', null, Date.now());
    await receiver.waitFor(3);
    expect(bodies(receiver).map((b) => b.data.content)).toEqual(['one', 'two', 'three']);
  });
});

describe('failures: retried with the same webhook-id until a 2xx, in order', () => {
  it('a receiver that fails twice then recovers gets the same message three times, then the next one', async () => {
    const { store, receiver, endpoint, secret } = await setup({ answer: (n) => (n < 2 ? 503 : 200) });
    await store.articles.insert([article('first'), article('second')], Date.now());
    const got = await receiver.waitFor(4);
    expect(got.map((r) => (JSON.parse(r.body) as { data: { content: string } }).data.content)).toEqual([
      'first',
      'first',
      'first',
      'second',
    ]);
    expect(new Set(got.slice(0, 3).map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(got[3]!.headers['webhook-id']).not.toBe(got[0]!.headers['webhook-id']);
    expect(got.slice(0, 3).map((r) => r.body)).toEqual([got[0]!.body, got[0]!.body, got[0]!.body]);
    for (const r of got) expect(independentlyVerified(secret, r.headers, r.body)).toBe(true);
    const e = await until(store, endpoint.id, (x) => x.cursor === 2 && x.failures === 0);
    expect(e).toMatchObject({ state: 'active', lastStatus: 200, nextAttemptAt: null });
    expect(e.lastError).toMatch(/^HTTP 503/);
  });

  it('no answer within the timeout is a failure; the article is sent again', async () => {
    const { store, receiver, endpoint, attempt } = await setup({
      answer: (n) => (n === 0 ? 'hang' : 200),
      dispatcher: { timeoutMs: 150 },
    });
    const failed = attempt((e) => e.outcome === 'failed');
    await store.articles.insert([article('slow')], Date.now());
    await failed;
    const e = await until(store, endpoint.id, (x) => x.lastError !== null);
    expect(e.lastError).toBe('no answer within 0.15 s');
    await receiver.waitFor(2);
    await until(store, endpoint.id, (x) => x.cursor === 1 && x.failures === 0);
  });

  it('a refused connection is a failure recorded with its reason', async () => {
    const { store, receiver, endpoint, attempt } = await setup();
    await receiver.close();
    const failed = attempt((e) => e.outcome === 'failed');
    await store.articles.insert([article('nobody home')], Date.now());
    await failed;
    const e = await until(store, endpoint.id, (x) => x.failures >= 1);
    expect(e.lastError).toMatch(/ECONNREFUSED/);
    expect(e.cursor).toBe(0);
  });

  it('a redirect is a failure, never followed', async () => {
    const { store, receiver, endpoint, attempt } = await setup({ answer: (n) => (n === 0 ? 302 : 200) });
    const failed = attempt((e) => e.outcome === 'failed');
    await store.articles.insert([article('moved')], Date.now());
    await failed;
    const e = await until(store, endpoint.id, (x) => x.lastError !== null);
    expect(e.lastError).toMatch(/^HTTP 302 \(redirects are not followed\)/);
    // The retry goes to the same URL (the receiver counts it), not to a Location.
    await receiver.waitFor(2);
    await until(store, endpoint.id, (x) => x.cursor === 1);
  });

  it('410 Gone disables the endpoint: nothing more is sent', async () => {
    const { store, receiver, endpoint, attempt } = await setup({ answer: () => 410 });
    const disabled = attempt((e) => e.outcome === 'disabled');
    await store.articles.insert([article('a'), article('b')], Date.now());
    await disabled;
    const e = await until(store, endpoint.id, (x) => x.state === 'disabled');
    expect(e.pausedReason).toBe('the receiver answered 410 Gone');
    expect(receiver.received).toHaveLength(1);
  });

  it('after 24 h of failures (fake clock) the endpoint is paused with the reason', async () => {
    const t0 = Date.parse('2026-11-24T12:00:00Z');
    let now = t0;
    const { store, endpoint, attempt } = await setup({
      dispatcher: {
        clock: () => now,
        // Every attempt fails and takes 10 h on the fake clock; retries at once (the clock only moves in `send`).
        retryRules: { scheduleMs: [0], everyMs: 0, jitterRatio: 0, giveUpAfterMs: 24 * 3600_000 },
        send: async () => {
          now += 10 * 3600_000;
          return { status: 500, error: 'HTTP 500', latencyMs: 1 };
        },
      },
    });
    const paused = attempt((e) => e.outcome === 'paused');
    await store.articles.insert([article('never')], t0);
    await paused;
    const e = await until(store, endpoint.id, (x) => x.state === 'paused');
    // Failures at +10 h (the first), +20 h, +30 h, +40 h: the run is 30 h old at the fourth.
    expect(e.failures).toBe(4);
    expect(e.pausedReason).toBe('failing since 2026-11-24T22:00:00.000Z (4 attempts over 24 h); last error: HTTP 500');
  });
});

describe('operator resume: an endpoint waiting for a retry tries again at once', () => {
  it('a resume while the next attempt is an hour away sends within a lease renewal', async () => {
    const { store, receiver, endpoint, attempt } = await setup({
      answer: (n) => (n === 0 ? 500 : 200),
      dispatcher: {
        retryRules: { scheduleMs: [3_600_000], everyMs: 3_600_000, jitterRatio: 0, giveUpAfterMs: 24 * 3600_000 },
      },
    });
    const failed = attempt((e) => e.outcome === 'failed');
    await store.articles.insert([article('retry me')], Date.now());
    await failed;
    expect((await until(store, endpoint.id, (x) => x.nextAttemptAt !== null)).failures).toBe(1);
    await store.webhooks.setState(endpoint.id, 'active', null, Date.now());
    await receiver.waitFor(2);
    await until(store, endpoint.id, (x) => x.cursor === 1 && x.failures === 0);
  });
});

describe('presentation: one body per article and tier, whatever the number of endpoints', () => {
  it("three endpoints of a pro account get the same bytes, built once per article (the delivery core's cache)", async () => {
    const { store, receiver, account, dispatcher } = await setup({ tier: 'pro' });
    const others = [await startReceiver(), await startReceiver()];
    for (const r of others) {
      cleanups.push(() => r.close());
      await store.webhooks.add(
        { id: newEndpointId(), accountId: account.id, url: r.url, tickers: null, secret: box.seal(newSecret()) },
        Date.now(),
      );
    }
    await dispatcher.refresh();
    await store.articles.insert([article('a', ['AAPL']), article('b')], Date.now());
    dispatcher.wake();
    await Promise.all([receiver, ...others].map((r) => r.waitFor(2)));
    const sent = [receiver, ...others].map((r) => r.received.map((x) => x.body));
    expect(sent[1]).toEqual(sent[0]);
    expect(sent[2]).toEqual(sent[0]);
    expect(dispatcher.bodies.built).toBe(2);
  });
});

describe('isolation: one slow endpoint never delays another', () => {
  it('an endpoint that never answers holds only itself; the other receives every article meanwhile', async () => {
    const { store, receiver, account, attempt } = await setup({
      answer: () => 'hang',
      dispatcher: { timeoutMs: 60_000 },
    });
    const fast = await startReceiver();
    cleanups.push(() => fast.close());
    await store.webhooks.add(
      { id: newEndpointId(), accountId: account.id, url: fast.url, tickers: null, secret: box.seal(newSecret()) },
      Date.now(),
    );
    const delivered = attempt((e) => e.outcome === 'delivered');
    await store.articles.insert([article('a'), article('b'), article('c')], Date.now());
    await fast.waitFor(3);
    await delivered;
    // The slow one still has its first request open: one at a time, in order.
    expect(receiver.received).toHaveLength(1);
    expect(bodies(fast).map((b) => b.data.content)).toEqual(['a', 'b', 'c']);
  });
});

describe('access: pro and max accounts only; destinations checked', () => {
  it('an account that left pro/max is paused at the re-check and receives nothing', async () => {
    const { store, receiver, endpoint, account } = await setup({ tier: 'pro', dispatcher: { recheckMs: 1 } });
    await store.articles.insert([article('while pro')], Date.now());
    await receiver.waitFor(1);
    await store.accounts.setTier(account.id, 'starter', Date.now());
    await store.articles.insert([article('after the downgrade')], Date.now());
    const e = await until(store, endpoint.id, (x) => x.state === 'paused');
    expect(e.pausedReason).toBe("the account's plan (starter) does not include webhooks (pro or max only)");
    expect(receiver.received).toHaveLength(1);
  });

  it('without WEBHOOK_ALLOW_PRIVATE a loopback destination is refused before any request', async () => {
    const { store, receiver, endpoint } = await setup({ dispatcher: { allowPrivate: false } });
    await store.articles.insert([article('x')], Date.now());
    const e = await until(store, endpoint.id, (x) => x.failures >= 1);
    expect(e.lastError).toMatch(/^refused destination: the webhook URL must use https/);
    expect(receiver.received).toHaveLength(0);
  });

  it('a host name resolving to 127.0.0.1 is refused without the flag', async () => {
    const { store, receiver, endpoint } = await setup({
      dispatcher: { allowPrivate: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] },
    });
    const https = receiver.url.replace('http://127.0.0.1', 'https://hooks.partner.example');
    await store.webhooks.remove(endpoint.id);
    const e2 = await store.webhooks.add(
      { id: newEndpointId(), accountId: endpoint.accountId, url: https, tickers: null, secret: box.seal(newSecret()) },
      Date.now(),
    );
    await store.articles.insert([article('x')], Date.now());
    const e = await until(store, e2.id, (x) => x.failures >= 1);
    expect(e.lastError).toMatch(/hooks\.partner\.example resolves to 127\.0\.0\.1/);
    expect(receiver.received).toHaveLength(0);
  });
});

describe('plan changes: a ticker filter is never dropped (the stream closes such a subscription with 1008)', () => {
  const PAUSED_FOR_PRO =
    "the account's plan (pro) does not include ticker filters (max only); the filter MSFT is kept and nothing is sent unfiltered (fns webhooks resume once the account is on max, or add an endpoint without --tickers)";

  it('a filtered endpoint of an account moved from max to pro is paused with the reason at the re-check; nothing unfiltered is sent', async () => {
    const { store, receiver, endpoint, account } = await setup({
      tier: 'max',
      tickers: ['MSFT'],
      dispatcher: { recheckMs: 1 },
    });
    await store.articles.insert([article('microsoft', ['MSFT'])], Date.now());
    await receiver.waitFor(1);
    await store.accounts.setTier(account.id, 'pro', Date.now());
    await store.articles.insert([article('apple', ['AAPL']), article('microsoft again', ['MSFT'])], Date.now());
    const e = await until(store, endpoint.id, (x) => x.state === 'paused');
    expect(e.pausedReason).toBe(PAUSED_FOR_PRO);
    expect(e.tickers).toEqual(['MSFT']);
    expect(e.cursor).toBe(1);
    expect(bodies(receiver).map((b) => b.data.content)).toEqual(['microsoft']);
  });

  it('back on max and resumed, it sends its backlog through the same filter', async () => {
    const { store, receiver, endpoint, account } = await setup({
      tier: 'max',
      tickers: ['MSFT'],
      dispatcher: { recheckMs: 1 },
    });
    await store.accounts.setTier(account.id, 'pro', Date.now());
    await store.articles.insert([article('apple', ['AAPL']), article('microsoft', ['MSFT'])], Date.now());
    await until(store, endpoint.id, (x) => x.state === 'paused');
    await store.accounts.setTier(account.id, 'max', Date.now());
    await store.webhooks.setState(endpoint.id, 'active', null, Date.now());
    await receiver.waitFor(1);
    const latest = await store.articles.latestSeq();
    await until(store, endpoint.id, (e) => e.cursor === latest);
    expect(bodies(receiver).map((b) => [b.data.content, b.data.tickers])).toEqual([
      ['microsoft', [{ ticker: 'MSFT', sentiment: 'neutral', relevance: 1 }]],
    ]);
  });

  it('an endpoint without a filter goes on after the same downgrade, presented for pro', async () => {
    const { store, receiver, endpoint, account } = await setup({ tier: 'max', dispatcher: { recheckMs: 1 } });
    await store.accounts.setTier(account.id, 'pro', Date.now());
    await store.articles.insert([article('apple', ['AAPL'])], Date.now());
    await receiver.waitFor(1);
    expect(bodies(receiver)[0]!.data).not.toHaveProperty('tickers');
    expect((await until(store, endpoint.id, (e) => e.cursor === 1)).state).toBe('active');
  });
});

describe('the outcome is the status line, whatever the body does', () => {
  it('a 200 whose body trickles forever is one delivery, recorded as delivered, never retried; its connection is cut', async () => {
    const { store, receiver, endpoint, events, attempt } = await setup({
      answer: (n) => (n === 0 ? { trickle: 200 } : 200),
      dispatcher: { timeoutMs: 200 },
    });
    const delivered = attempt((e) => e.outcome === 'delivered');
    await store.articles.insert([article('trickled')], Date.now());
    await delivered;
    await store.articles.insert([article('next')], Date.now());
    await receiver.waitFor(2);
    const e = await until(store, endpoint.id, (x) => x.cursor === 2);
    expect(bodies(receiver).map((b) => b.data.content)).toEqual(['trickled', 'next']);
    expect(events.map((x) => [x.outcome, x.status, x.error])).toEqual([
      ['delivered', 200, null],
      ['delivered', 200, null],
    ]);
    expect(e).toMatchObject({ failures: 0, lastStatus: 200, lastError: null });
    await waitUntil(() => receiver.trickleClosed === 1, 'the trickling answer cut off by the sender');
  });

  it('a 503 whose body trickles is a failure with its status and the first bytes of its body', async () => {
    const { store, receiver, endpoint, events, attempt } = await setup({
      answer: (n) => (n === 0 ? { trickle: 503 } : 200),
      dispatcher: { timeoutMs: 200 },
    });
    const failed = attempt((e) => e.outcome === 'failed');
    await store.articles.insert([article('refused slowly')], Date.now());
    await failed;
    expect(events[0]).toMatchObject({
      status: 503,
      error: expect.stringMatching(/^HTTP 503: answer 503 \.*$/) as unknown,
    });
    await receiver.waitFor(2);
    const e = await until(store, endpoint.id, (x) => x.cursor === 1 && x.failures === 0);
    expect(e.lastError).toMatch(/^HTTP 503: answer 503/);
  });
});

describe('secret rotations: the current secret and at most 3 previous ones sign', () => {
  it('after 500 rotations within 24 h a delivery carries 4 signatures (a receiver with the usual 16 KiB header limit takes it); the newest 4 secrets verify it', async () => {
    const { store, receiver, endpoint, secret, dispatcher } = await setup();
    const secrets = [secret];
    const t0 = Date.now();
    for (let i = 0; i < 500; i++) {
      const s = newSecret();
      secrets.unshift(s);
      await store.webhooks.rotateSecret(endpoint.id, box.seal(s), t0 + i, DAY);
    }
    await dispatcher.refresh();
    await store.articles.insert([article('signed')], Date.now());
    const [got] = await receiver.waitFor(1);
    const header = String(got!.headers['webhook-signature']);
    expect(header.split(' ')).toHaveLength(1 + PREVIOUS_SECRETS_MAX);
    expect(header.length).toBeLessThan(256);
    expect(secrets.slice(0, 4).map((s) => independentlyVerified(s, got!.headers, got!.body))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(independentlyVerified(secrets[4]!, got!.headers, got!.body)).toBe(false);
  });
});

/**
 * The WebhookStore behaviour (registry, cursor from the end of the feed, pause/resume, secret rotation,
 * leases across processes, attempts recorded by the lease holder only), run against every engine
 * (webhooks-sqlite.test.ts, webhooks-postgres.test.ts). `open` gives a fresh, empty store; `peer` a
 * second, independent connection to the same data (another process or instance).
 */
import { expect } from 'vitest';
import { OpenedStores, registerStoreTests } from './suite-kit.js';
import type { NewArticle, Store, WebhookAttempt } from '../../src/store/ports/index.js';
import { PREVIOUS_SECRETS_MAX } from '../../src/domain/webhook-secrets.js';

export interface WebhooksHarness {
  open(): Promise<Store>;
  peer(store: Store): Promise<Store>;
  cleanup(): Promise<void>;
  skip?: boolean;
}

const T0 = Date.parse('2026-11-24T12:00:00.000Z');
const HOUR = 3600_000;
const article = (content: string): NewArticle => ({
  content,
  urgency: 'regular',
  sentiment: null,
  published_at: null,
  tickers: [],
});
const attempt = (over: Partial<WebhookAttempt> = {}): WebhookAttempt => ({
  at: T0,
  cursor: null,
  status: 200,
  error: null,
  ok: true,
  failures: 0,
  firstFailureAt: null,
  nextAttemptAt: null,
  state: 'active',
  pausedReason: null,
  ...over,
});

export function describeWebhookStore(name: string, h: WebhooksHarness): number {
  const tests: [string, () => Promise<void>][] = [];
  const test = (title: string, fn: () => Promise<void>) => tests.push([title, fn]);
  const opened = new OpenedStores();
  const open = async () => opened.track(await h.open());
  const peer = async (s: Store) => opened.track(await h.peer(s));
  const endpoint = async (s: Store, id: string, over: { tickers?: string[] | null; accountId?: string } = {}) => {
    const accountId = over.accountId ?? (await s.accounts.createAccount('max', T0)).id;
    return s.webhooks.add(
      { id, accountId, url: `https://hooks.example.com/${id}`, tickers: over.tickers ?? null, secret: `sealed-${id}` },
      T0,
    );
  };

  test('an endpoint starts at the end of the feed: only articles stored after it are its backlog', async () => {
    const s = await open();
    await s.articles.insert([article('before 1'), article('before 2')], T0);
    const e = await endpoint(s, 'wh_a', { tickers: ['AAPL'] });
    expect(e).toMatchObject({
      id: 'wh_a',
      url: 'https://hooks.example.com/wh_a',
      tickers: ['AAPL'],
      state: 'active',
      pausedReason: null,
      cursor: await s.articles.latestSeq(),
      failures: 0,
      nextAttemptAt: null,
      lastSuccessAt: null,
      lastError: null,
      secrets: [{ secret: 'sealed-wh_a', expiresAt: null }],
      createdAt: T0,
    });
    expect(e.cursor).toBeGreaterThan(0);
    await s.articles.insert([article('after')], T0 + 1);
    const feed = await s.articles.feedAfter(e.cursor, 10);
    expect(feed.map((f) => f.article.content)).toEqual(['after']);
  });

  test('list in creation order, per account; get; remove', async () => {
    const s = await open();
    const acct = (await s.accounts.createAccount('pro', T0)).id;
    await endpoint(s, 'wh_1', { accountId: acct });
    await endpoint(s, 'wh_2');
    await endpoint(s, 'wh_3', { accountId: acct });
    expect((await s.webhooks.list()).map((e) => e.id)).toEqual(['wh_1', 'wh_2', 'wh_3']);
    expect((await s.webhooks.list(acct)).map((e) => e.id)).toEqual(['wh_1', 'wh_3']);
    expect((await s.webhooks.get('wh_2'))?.tickers).toBeNull();
    expect(await s.webhooks.remove('wh_2')).toBe(true);
    expect(await s.webhooks.remove('wh_2')).toBe(false);
    expect(await s.webhooks.get('wh_2')).toBeUndefined();
  });

  test('pause keeps its reason; resume clears the failure run and the next attempt', async () => {
    const s = await open();
    await endpoint(s, 'wh_p');
    await s.webhooks.claim('a', T0, 60_000, 10);
    await s.webhooks.recordAttempt(
      'wh_p',
      'a',
      attempt({
        ok: false,
        status: 500,
        error: 'HTTP 500',
        failures: 3,
        firstFailureAt: T0,
        nextAttemptAt: T0 + 30_000,
      }),
    );
    const paused = await s.webhooks.setState('wh_p', 'paused', 'paused by operator', T0);
    expect(paused).toMatchObject({ state: 'paused', pausedReason: 'paused by operator', failures: 3 });
    expect(await s.webhooks.claim('b', T0 + HOUR, 60_000, 10)).toEqual([]);
    const resumed = await s.webhooks.setState('wh_p', 'active', null, T0);
    expect(resumed).toMatchObject({
      state: 'active',
      pausedReason: null,
      failures: 0,
      firstFailureAt: null,
      nextAttemptAt: null,
      lastError: 'HTTP 500',
    });
    expect(await s.webhooks.setState('wh_missing', 'paused', 'x', T0)).toBeUndefined();
  });

  test('rotation: the new secret first, the old one until the overlap ends, expired ones dropped', async () => {
    const s = await open();
    await endpoint(s, 'wh_r');
    const once = await s.webhooks.rotateSecret('wh_r', 'sealed-2', T0, 24 * HOUR);
    expect(once?.secrets).toEqual([
      { secret: 'sealed-2', expiresAt: null },
      { secret: 'sealed-wh_r', expiresAt: T0 + 24 * HOUR },
    ]);
    const twice = await s.webhooks.rotateSecret('wh_r', 'sealed-3', T0 + 25 * HOUR, 24 * HOUR);
    expect(twice?.secrets.map((x) => x.secret)).toEqual(['sealed-3', 'sealed-2']);
    expect(await s.webhooks.rotateSecret('wh_missing', 'x', T0, HOUR)).toBeUndefined();
  });

  test('rotation: 500 rotations within 24 h keep the new secret and the 3 previous ones, newest first; the oldest are dropped', async () => {
    const s = await open();
    await endpoint(s, 'wh_b');
    for (let i = 1; i <= 500; i++) await s.webhooks.rotateSecret('wh_b', `sealed-${i}`, T0 + i * 60_000, 24 * HOUR);
    const e = (await s.webhooks.get('wh_b'))!;
    expect(e.secrets).toHaveLength(1 + PREVIOUS_SECRETS_MAX);
    expect(e.secrets).toEqual([
      { secret: 'sealed-500', expiresAt: null },
      { secret: 'sealed-499', expiresAt: T0 + 500 * 60_000 + 24 * HOUR },
      { secret: 'sealed-498', expiresAt: T0 + 499 * 60_000 + 24 * HOUR },
      { secret: 'sealed-497', expiresAt: T0 + 498 * 60_000 + 24 * HOUR },
    ]);
  });

  test('leases: one owner at a time across processes; renewed by its owner; taken over once expired; released', async () => {
    const s = await open();
    const other = await peer(s);
    await endpoint(s, 'wh_l1');
    await endpoint(s, 'wh_l2');
    expect((await s.webhooks.claim('a', T0, 10_000, 10)).map((e) => e.id)).toEqual(['wh_l1', 'wh_l2']);
    expect(await other.webhooks.claim('b', T0 + 5_000, 10_000, 10)).toEqual([]);
    // Renewed by its owner: still held past the first lease's end.
    expect((await s.webhooks.claim('a', T0 + 9_000, 10_000, 10)).map((e) => e.id)).toEqual(['wh_l1', 'wh_l2']);
    expect(await other.webhooks.claim('b', T0 + 15_000, 10_000, 10)).toEqual([]);
    // The owner died: taken over once its lease ran out.
    expect((await other.webhooks.claim('b', T0 + 19_001, 10_000, 1)).map((e) => e.id)).toEqual(['wh_l1']);
    await s.webhooks.release('a');
    expect((await other.webhooks.claim('b', T0 + 19_002, 10_000, 10)).map((e) => e.id)).toEqual(['wh_l1', 'wh_l2']);
  });

  test('concurrent claims from two processes never hand one endpoint to both', async () => {
    const s = await open();
    const other = await peer(s);
    for (let i = 0; i < 20; i++) await endpoint(s, `wh_c${String(i).padStart(2, '0')}`);
    const [a, b] = await Promise.all([
      s.webhooks.claim('a', T0, 10_000, 20),
      other.webhooks.claim('b', T0, 10_000, 20),
    ]);
    const ids = [...a, ...b].map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(20);
  });

  test('attempts: recorded by the lease holder only; the cursor never moves back; 410 disables', async () => {
    const s = await open();
    await endpoint(s, 'wh_x');
    await s.webhooks.claim('a', T0, 10_000, 10);
    expect(await s.webhooks.recordAttempt('wh_x', 'b', attempt({ cursor: 99 }))).toBe(false);
    expect(await s.webhooks.recordAttempt('wh_x', 'a', attempt({ cursor: 7, at: T0 + 1 }))).toBe(true);
    expect(await s.webhooks.recordAttempt('wh_x', 'a', attempt({ cursor: 5 }))).toBe(true);
    let e = (await s.webhooks.get('wh_x'))!;
    expect(e).toMatchObject({ cursor: 7, lastStatus: 200, lastSuccessAt: T0 });
    // Articles skipped by the filters move the cursor without an attempt.
    await s.webhooks.recordAttempt('wh_x', 'a', attempt({ cursor: 9, status: null, ok: null, at: T0 + 5 }));
    e = (await s.webhooks.get('wh_x'))!;
    expect(e).toMatchObject({ cursor: 9, lastStatus: 200, lastAttemptAt: T0 });
    await s.webhooks.recordAttempt(
      'wh_x',
      'a',
      attempt({
        ok: false,
        status: 410,
        error: 'HTTP 410 Gone',
        state: 'disabled',
        pausedReason: 'the receiver answered 410 Gone',
      }),
    );
    e = (await s.webhooks.get('wh_x'))!;
    expect(e).toMatchObject({
      state: 'disabled',
      pausedReason: 'the receiver answered 410 Gone',
      lastStatus: 410,
      lastError: 'HTTP 410 Gone',
    });
    expect(await s.webhooks.claim('a', T0 + 1, 10_000, 10)).toEqual([]);
  });

  test('an operator pause wins over an attempt that finished meanwhile', async () => {
    const s = await open();
    const cli = await peer(s);
    await endpoint(s, 'wh_o');
    await s.webhooks.claim('a', T0, 10_000, 10);
    await cli.webhooks.setState('wh_o', 'paused', 'paused by operator', T0);
    await s.webhooks.recordAttempt('wh_o', 'a', attempt({ cursor: 3 }));
    expect(await s.webhooks.get('wh_o')).toMatchObject({
      state: 'paused',
      pausedReason: 'paused by operator',
      cursor: 3,
    });
  });

  registerStoreTests(`webhook store: ${name}`, tests, h, () => opened.closeAll(), { timeout: 60_000 });
  return tests.length;
}

/**
 * One item's unexpected error is that item's outcome, never its batch's, on every ingestion path: an
 * item whose enrichment, identity, mapping or dedup step throws (an unexpected error, not a validation
 * error) is answered `invalid` with its line (`fns articles ingest`, the admin push) or counted as a
 * failed item with its guid (a polled feed), logged once with the error's class and never its message,
 * and every other item of the batch is stored. The same on the worker threads that take part: a large
 * push read off the event loop (push-worker.mjs) and a large feed prepared off it (prepare-worker.mjs).
 *
 * The throw is made by test/support/poison.mjs (normalising a marked text throws a TypeError), on this
 * thread or, as a preload, on the worker threads; the dedup step's throw on this thread by a
 * near-duplicate rule that throws for the marked text (the stores' `nearRule` option).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ingest, type IngestReport } from '../../src/cli/operator.js';
import { startAdminServer, type AdminServer } from '../../src/ops/admin.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { PUSH_OFF_THREAD_MIN_BYTES, stopPushReader } from '../../src/ops/push.js';
import { preloadInWorkers } from '../../src/runtime/off-thread.js';
import { OFF_THREAD_MIN_BYTES, stopFeedPreparer } from '../../src/sources/off-thread.js';
import { SourcePoller, sourcedArticle, type PollReport } from '../../src/sources/index.js';
import type { FetchFn } from '../../src/sources/poll.js';
import { defaultNearRule } from '../../src/store/ports/near-rule.js';
import type { NearDuplicateRule, Store } from '../../src/store/ports/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { POISON, poison, unpoison } from '../support/poison.mjs';
import { pgReachable, pgTestStores, reportUnreachable } from '../support/postgres.js';
import { title } from './support.js';
import { recordLog } from '../support/log.js';

const POISON_MODULE = new URL('../support/poison.mjs', import.meta.url).href;
const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const TOKEN = 'operator-token-for-isolation-tests';

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  unpoison();
  preloadInWorkers([]);
  // The next test starts its worker threads afresh (with its own preloads, or none).
  await stopPushReader();
  await stopFeedPreparer();
  for (const c of closers.splice(0).reverse()) await c();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A SQLite file store, as the service opens it. */
function sqlite(opts: { nearRule?: NearDuplicateRule } = {}): SqliteStore {
  const d = mkdtempSync(join(tmpdir(), 'fns-isolation-'));
  dirs.push(d);
  const store = new SqliteStore(join(d, 'fns.sqlite'), { busyTimeoutMs: 5, ...opts });
  closers.push(() => store.close());
  return store;
}

/** Poisons the worker threads started from now on (push reader, feed preparer). */
async function poisonWorkers(): Promise<void> {
  await stopPushReader();
  await stopFeedPreparer();
  preloadInWorkers([POISON_MODULE]);
}

/**
 * The near-duplicate rule of the service, throwing for a marked text: the dedup step's unexpected error on this thread.
 */
const throwingRule: NearDuplicateRule = {
  windowMs: defaultNearRule.windowMs,
  isNearDuplicate: (a, b) => {
    if (a.includes(POISON) || b.includes(POISON))
      throw new TypeError('poisoned text: this message must not reach an answer or a log');
    return defaultNearRule.isNearDuplicate(a, b);
  },
};

/** A story another wire carried first, and the marked copy whose near-duplicate comparison with it throws. */
const STORY = 'Acme Corp shares jump 12% after record quarterly profit beats forecasts';
const MARKED = `${STORY} ${POISON}`;

/**
 * 1,000 NDJSON lines for `fns articles ingest`: distinct stories, line 500 the marked one (and, with `near`, line 1 the
 * story it is compared with).
 */
function ingestLines(near: boolean): string[] {
  return Array.from({ length: 1000 }, (_, i) => {
    const n = i + 1;
    if (n === 500) return JSON.stringify({ content: MARKED, source: 'wire-b' });
    if (n === 1 && near) return JSON.stringify({ content: STORY, source: 'wire-a' });
    return JSON.stringify({ content: `${title(n)} on day ${n}`, source: 'wire-a' });
  });
}

function expectLine500Alone(report: IngestReport, skipped: { line: number; error: string }[]): void {
  expect(report.ingested).toBe(999);
  expect(report.errors).toEqual([{ line: 500, error: expect.stringContaining('an unexpected TypeError') }]);
  // Told once, by its line and the error's class; never the error's message.
  expect(skipped).toEqual(report.errors);
  expect(JSON.stringify(report)).not.toContain('must not reach');
}

describe('fns articles ingest: a line that throws is skipped by itself, never its block of 1,000', () => {
  it('its enrichment or identity throws (inline): the other 999 lines of the block are stored', async () => {
    const store = sqlite();
    poison();
    const skipped: { line: number; error: string }[] = [];
    const report = await ingest(store.sources, ingestLines(false), () => T0, { onSkip: (e) => skipped.push(e) });
    expectLine500Alone(report, skipped);
    expect(await store.articles.count()).toBe(999);
  });

  it('its dedup step throws in the store (its near-duplicate comparison): the other 999 are stored in the same block', async () => {
    const store = sqlite({ nearRule: throwingRule });
    const skipped: { line: number; error: string }[] = [];
    const report = await ingest(store.sources, ingestLines(true), () => T0, { onSkip: (e) => skipped.push(e) });
    expectLine500Alone(report, skipped);
    expect(await store.articles.count()).toBe(999);
  });
});

const pg = await pgReachable();
const pgStores = pgTestStores();
describe.skipIf(!pg)('fns articles ingest on PostgreSQL: a line whose dedup step throws is skipped by itself', () => {
  afterAll(() => pgStores.cleanup());
  it('the other 999 lines of the block are stored', async () => {
    const store = await pgStores.open({ nearRule: throwingRule });
    closers.push(() => store.close());
    const skipped: { line: number; error: string }[] = [];
    const report = await ingest(store.sources, ingestLines(true), () => T0, { onSkip: (e) => skipped.push(e) });
    expectLine500Alone(report, skipped);
    expect(await store.articles.count()).toBe(999);
  });
});
reportUnreachable(pg, 1);

/** An admin listener pushing into `store`; its structured warnings collected. */
async function admin(store: Store) {
  const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
  const lines: string[] = [];
  const server: AdminServer = await startAdminServer({
    port: 0,
    checks: [],
    metrics: createMetrics({ defaultMetrics: false }),
    log: recordLog(lines, warnings),
    push: { token: TOKEN, store: store.sources, clock: () => T0 },
  });
  closers.push(() => server.close());
  const push = async (body: string) => {
    const res = await fetch(`${server.url}/admin/v1/articles`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${TOKEN}` },
      body,
    });
    return {
      status: res.status,
      answer: (await res.json()) as {
        stored: number;
        duplicates: number;
        invalid: number;
        results: { line: number; status: string; error?: string }[];
      },
    };
  };
  return { push, warnings, lines };
}

/**
 * 1,000 push lines, line 500 the marked copy of line 1's story (from another wire); each line padded to make the body
 * `minBytes` long at least.
 */
function pushBody(minBytes: number): string {
  const pad = Math.ceil(minBytes / 1000);
  const lines = Array.from({ length: 1000 }, (_, i) => {
    const n = i + 1;
    if (n === 500) return JSON.stringify({ source: 'wire-b', id: `b${n}`, content: MARKED });
    if (n === 1) return JSON.stringify({ source: 'wire-a', id: `a${n}`, content: STORY });
    return JSON.stringify({ source: 'wire-a', id: `a${n}`, content: `Story ${n}${'.'.repeat(pad)}` });
  });
  return `${lines.join('\n')}\n`;
}

async function expectPushedAlone(a: Awaited<ReturnType<typeof admin>>, body: string, store: Store) {
  const { status, answer } = await a.push(body);
  expect(status).toBe(200);
  expect({ stored: answer.stored, duplicates: answer.duplicates, invalid: answer.invalid }).toEqual({
    stored: 999,
    duplicates: 0,
    invalid: 1,
  });
  expect(answer.results.filter((r) => r.status === 'invalid')).toEqual([
    { line: 500, status: 'invalid', error: expect.stringContaining('an unexpected TypeError') },
  ]);
  expect(await store.articles.count()).toBe(999);
  // Logged once, with its line and the error's class, never the error's message.
  expect(a.warnings.map((w) => w.fields)).toEqual([{ kind: 'push', line: 500, err_class: 'TypeError' }]);
  expect(JSON.stringify([answer, a.warnings, a.lines])).not.toContain('must not reach');
}

describe('the admin push: a line that throws is invalid by itself, never a 500 for its 1,000 lines', () => {
  it('read on the event loop (under 64 KiB): its checks, enrichment or identity throw; the other 999 are stored', async () => {
    const store = sqlite();
    const a = await admin(store);
    const body = pushBody(0);
    expect(Buffer.byteLength(body)).toBeLessThan(PUSH_OFF_THREAD_MIN_BYTES);
    poison();
    await expectPushedAlone(a, body, store);
  });

  it('read on the worker thread (64 KiB and more): the same answer', async () => {
    const store = sqlite();
    const a = await admin(store);
    const body = pushBody(PUSH_OFF_THREAD_MIN_BYTES);
    expect(Buffer.byteLength(body)).toBeGreaterThanOrEqual(PUSH_OFF_THREAD_MIN_BYTES);
    await poisonWorkers();
    await expectPushedAlone(a, body, store);
  });
});

/**
 * An RSS feed of `n` items (guid g-<i>) of distinct stories, item `marked` the marked copy of STORY; padded to
 * `minBytes`.
 */
function feedOf(n: number, marked: number, minBytes = 0): Uint8Array {
  const pad = Math.ceil(minBytes / n);
  const item = (i: number) => {
    const text = i === marked ? MARKED : `${title(i)} on day ${i}`;
    return `<item><title>${text}</title><link>https://ex.com/${i}</link><guid>g-${i}</guid><description>${'x'.repeat(pad)}</description></item>`;
  };
  return new TextEncoder().encode(
    `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>t</title>${Array.from({ length: n }, (_, i) => item(i)).join('')}</channel></rss>`,
  );
}

/** A poller of one source whose feed is `body`, polled once; its report, its warnings and the store. */
async function pollOnceWith(store: Store, body: Uint8Array) {
  await store.sources.add(
    { name: 'wire', url: 'https://feeds.example/wire.xml', everyMs: 3600_000, urgency: 'auto' },
    T0,
  );
  const fetch: FetchFn = async (url) => ({
    kind: 'ok',
    status: 200,
    body,
    contentType: 'application/rss+xml',
    validators: { etag: null, lastModified: null },
    finalUrl: url,
  });
  const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
  const lines: string[] = [];
  let polled!: (r: PollReport) => void;
  const report = new Promise<PollReport>((resolve) => (polled = resolve));
  const poller = new SourcePoller({
    store: store.sources,
    fetch,
    log: recordLog(lines, warnings),
    onPoll: (r) => polled(r),
  });
  closers.push(() => poller.stop());
  await poller.start();
  const first = await report;
  await poller.stop();
  return { report: first, warnings, lines };
}

async function expectPolledAlone(store: Store, body: Uint8Array, n: number) {
  const { report, warnings, lines } = await pollOnceWith(store, body);
  expect(report).toMatchObject({
    outcome: 'ok',
    error: null,
    ingested: n - 1,
    failed: [{ guid: 'g-250', errClass: 'TypeError' }],
  });
  expect(await store.articles.count()).toBe(n - 1);
  expect(await store.sources.get('wire')).toMatchObject({
    lastStatus: 200,
    lastError: null,
    failures: 0,
    itemsIngested: n - 1,
  });
  expect(warnings.map((w) => w.fields)).toEqual([
    { kind: 'source-item', source: 'wire', guid: 'g-250', err_class: 'TypeError' },
  ]);
  expect(JSON.stringify([report, warnings, lines])).not.toContain('must not reach');
}

describe('a polled feed: an item that throws is counted as failed by its guid, and the rest of the poll is stored', () => {
  it('prepared on the event loop (under 64 KiB): its mapping, enrichment or identity throws', async () => {
    const store = sqlite();
    const body = feedOf(300, 250);
    expect(body.length).toBeLessThan(OFF_THREAD_MIN_BYTES);
    poison();
    await expectPolledAlone(store, body, 300);
  });

  it('prepared on the worker thread (64 KiB and more): the same', async () => {
    const store = sqlite();
    const body = feedOf(300, 250, OFF_THREAD_MIN_BYTES);
    expect(body.length).toBeGreaterThanOrEqual(OFF_THREAD_MIN_BYTES);
    await poisonWorkers();
    await expectPolledAlone(store, body, 300);
  });

  it('its dedup step throws in the store: the same, by its id at the source', async () => {
    const store = sqlite({ nearRule: throwingRule });
    // The marked item's candidate must be another wire's story, stored within the near window of the
    // poller's (real) clock: that wire's copy is stored first.
    await store.sources.ingestItems(
      [
        sourcedArticle('wire-a', 'first', {
          content: STORY,
          urgency: 'regular',
          sentiment: null,
          published_at: null,
          tickers: [],
          source: 'wire-a',
          url: null,
        }),
      ],
      Date.now(),
    );
    const { report, warnings } = await pollOnceWith(store, feedOf(300, 250));
    expect(report).toMatchObject({ outcome: 'ok', error: null, failed: [{ guid: 'g-250', errClass: 'TypeError' }] });
    expect(report.ingested).toBe(299);
    expect(warnings.map((w) => w.fields)).toEqual([
      { kind: 'source-item', source: 'wire', guid: 'g-250', err_class: 'TypeError' },
    ]);
  });
});

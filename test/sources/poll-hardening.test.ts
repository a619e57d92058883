/**
 * The poller against what a feed, a server or its own faults may do, on both engines:
 *
 * - a poll that throws, or whose bookkeeping does, is still recorded as failed (kind `internal`, the
 *   error's class, never its message), counted, logged once, and polled again on its failure schedule,
 *   long before its lease would run out;
 * - every number a feed or a server controls is bounded before the schedule uses it and the store keeps
 *   it (the feed's floor at 24 h, a Retry-After at 6 h; what is no number counts as unset);
 * - an item without any text is counted as seen once, not at every poll;
 * - an item that fails at every poll is logged when it starts failing, not at every poll.
 *
 * The feeds are answered by an injected fetch (the HTTP side has suites of its own), so each poll's
 * answer is exactly what the test says.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  feedFloorMs,
  nextPollAfterFailure,
  nextPollAfterSuccess,
  POLL_DEFAULTS,
} from '../../src/sources/poll-rules.js';
import { SourcePoller, type PollReport, type PollerOptions } from '../../src/sources/index.js';
import { PollRecorder } from '../../src/sources/poll-record.js';
import type { PollResult } from '../../src/sources/poll.js';
import type { FetchFn } from '../../src/sources/poll.js';
import type { FetchResult } from '../../src/sources/feed/index.js';
import type { SourceRecord, SourceStore, Store } from '../../src/store/ports/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { pgReachable, pgTestStores, reportUnreachable } from '../support/postgres.js';
import { until } from '../support/wait.js';
import { silentLog } from '../../src/domain/log.js';
import { recordLog } from '../support/log.js';

const HOUR = 3600_000;
const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const pg = await pgReachable();
const pgStores = pgTestStores();
afterAll(() => pgStores.cleanup());

const engines: { engine: string; skip: boolean; open: () => Promise<Store> }[] = [
  {
    engine: 'sqlite',
    skip: false,
    open: async () => {
      const d = mkdtempSync(join(tmpdir(), 'fns-poll-hardening-'));
      dirs.push(d);
      return new SqliteStore(join(d, 'fns.sqlite'));
    },
  },
  { engine: 'postgres', skip: !pg, open: () => pgStores.open() },
];

const ok = (xml: string): FetchResult => ({
  kind: 'ok',
  status: 200,
  body: new TextEncoder().encode(xml),
  contentType: 'application/rss+xml',
  validators: { etag: null, lastModified: null },
  finalUrl: 'https://feeds.example/wire.xml',
});
const rss = (items: string, channel = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>t</title>${channel}${items}</channel></rss>`;
const ONE_ITEM = rss('<item><title>Copper rallies on supply fears</title><guid>g-1</guid></item>');

/** Each call of the fetch answers the next of `answers` (the last one again once they are used up). */
function scripted(answers: (FetchResult | Error)[]): { fetch: FetchFn; calls: () => number } {
  let n = 0;
  const fetch: FetchFn = async () => {
    const a = answers[Math.min(n++, answers.length - 1)]!;
    if (a instanceof Error) throw a;
    return a;
  };
  return { fetch, calls: () => n };
}

describe.each(engines)('the poller on $engine', ({ skip, open }) => {
  /**
   * A store with one source `wire` (polled every second) and a poller of it, with its reports, warnings, log and
   * counters.
   */
  async function setup(
    fetch: FetchFn,
    { sources, ...over }: Partial<PollerOptions> & { sources?: (s: SourceStore) => SourceStore } = {},
  ) {
    const store = await open();
    closers.push(() => store.close());
    await store.sources.add(
      { name: 'wire', url: 'https://feeds.example/wire.xml', everyMs: 1000, urgency: 'auto' },
      Date.now(),
    );
    const reports: PollReport[] = [];
    const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
    const lines: string[] = [];
    const polls = new Map<string, number>();
    const items = new Map<string, number>();
    const poller = new SourcePoller({
      store: sources ? sources(store.sources) : store.sources,
      fetch,
      // A lease far longer than the test: only the failure schedule can bring the source back.
      leaseMs: 10 * 60_000,
      tickMs: 50,
      random: () => 0,
      log: recordLog(lines, warnings),
      onPoll: (r) => reports.push(r),
      metrics: {
        sourcePolls: { inc: ({ outcome }) => void polls.set(outcome, (polls.get(outcome) ?? 0) + 1) },
        sourceItems: { inc: ({ outcome }, n) => void items.set(outcome, (items.get(outcome) ?? 0) + n) },
      },
      ...over,
    });
    closers.push(() => poller.stop());
    await poller.start();
    return { store, reports, warnings, lines, polls, items, poller };
  }

  describe.skipIf(skip)(
    'a poll that fails unexpectedly is recorded as failed and tried again on its failure schedule',
    () => {
      it("its fetch throws: recorded with the error's class (never its message), counted, logged once, polled again within seconds", async () => {
        const feed = scripted([new TypeError('the feed said: \u001b[2J secret'), ok(ONE_ITEM)]);
        const t = await setup(feed.fetch);
        await until(() => t.reports.length >= 1, 'the first poll recorded');
        expect(t.reports[0]).toMatchObject({
          source: 'wire',
          outcome: 'error',
          status: null,
          failures: 1,
          error: expect.stringMatching(/^internal: .*TypeError/),
        });
        const rec = (await t.store.sources.get('wire'))!;
        expect(rec).toMatchObject({ failures: 1, lastStatus: null, lastError: t.reports[0]!.error });
        expect(rec.lastPollAt).not.toBeNull();
        // The failure schedule (the source's interval, 1 s, at the first failure), not the 10-minute lease.
        expect(Date.parse(rec.nextPollAt!) - Date.parse(rec.lastPollAt!)).toBe(
          nextPollAfterFailure(0, 1000, 1, null, () => 0),
        );
        expect(t.polls.get('internal')).toBe(1);
        expect(t.warnings).toEqual([
          {
            fields: expect.objectContaining({
              kind: 'source',
              source: 'wire',
              err_class: 'TypeError',
              stack: expect.any(Array),
            }),
            msg: 'poll failed',
          },
        ]);
        expect(JSON.stringify([t.reports, t.warnings, t.lines, rec])).not.toContain('secret');
        // Polled again on that schedule: fine this time.
        await until(() => t.reports.length >= 2, 'the poll after the failure', 10_000);
        expect(t.reports[1]).toMatchObject({ outcome: 'ok', failures: 0, ingested: 1 });
        expect(await t.store.sources.get('wire')).toMatchObject({ failures: 0, lastError: null, lastStatus: 200 });
      });

      it('its bookkeeping fails (the record of its success is refused): recorded as failed all the same, and polled again', async () => {
        let refusals = 1;
        // The store refuses the first record (an error of no dependency class: a fault, not the database's trouble).
        const sources = (s: SourceStore): SourceStore =>
          new Proxy(s, {
            get(target, key) {
              if (key === 'recordPoll') {
                return async (...args: Parameters<SourceStore['recordPoll']>) => {
                  if (args[2].error === null && refusals-- > 0)
                    throw new RangeError('value out of range for type bigint');
                  return target.recordPoll(...args);
                };
              }
              const v = Reflect.get(target, key, target) as unknown;
              return typeof v === 'function' ? v.bind(target) : v;
            },
          });
        const t = await setup(scripted([ok(ONE_ITEM)]).fetch, { sources });
        await until(() => t.reports.length >= 1, 'the first poll recorded');
        expect(t.reports[0]).toMatchObject({
          outcome: 'error',
          failures: 1,
          error: expect.stringMatching(/^internal: .*RangeError/),
        });
        expect(await t.store.sources.get('wire')).toMatchObject({ failures: 1, lastError: t.reports[0]!.error });
        expect(t.polls.get('internal')).toBe(1);
        // The item was stored before the record failed; the next poll reads it again (the same item) and records fine.
        await until(() => t.reports.length >= 2, 'the poll after the failure', 10_000);
        expect(t.reports[1]).toMatchObject({ outcome: 'ok', failures: 0, ingested: 0 });
        expect(await t.store.articles.count()).toBe(1);
      });
    },
  );

  describe.skipIf(skip)('numbers a feed or a server sets are bounded before they are used or stored', () => {
    it('a ttl of 10^20 minutes and an update frequency past any integer: the floor is 24 h, in the schedule and the record', async () => {
      const huge = rss(
        '<item><title>Copper rallies on supply fears</title><guid>g-1</guid></item>',
        '<ttl>99999999999999999999</ttl><sy:updatePeriod xmlns:sy="http://purl.org/rss/1.0/modules/syndication/">hourly</sy:updatePeriod><sy:updateFrequency xmlns:sy="http://purl.org/rss/1.0/modules/syndication/">99999999999999999999999</sy:updateFrequency>',
      );
      const t = await setup(scripted([ok(huge)]).fetch);
      await until(() => t.reports.length >= 1, 'the poll recorded');
      expect(t.reports[0]).toMatchObject({ outcome: 'ok', error: null, ingested: 1 });
      const rec = (await t.store.sources.get('wire'))!;
      expect(rec.lastError).toBeNull();
      expect(rec.minIntervalMs).toBe(24 * HOUR);
      expect(Date.parse(rec.nextPollAt!) - Date.parse(rec.lastPollAt!)).toBe(24 * HOUR);
    });

    it('a Retry-After that is no number, or endless: the failure schedule alone, or 6 h at most', async () => {
      const busy = (retryAfterMs: number): FetchResult => ({
        kind: 'error',
        status: 503,
        message: 'HTTP 503',
        retryAfterMs,
        error: 'http',
      });
      const t = await setup(scripted([busy(Number.NaN), busy(Number.POSITIVE_INFINITY)]).fetch);
      await until(() => t.reports.length >= 1, 'the first poll recorded');
      const first = (await t.store.sources.get('wire'))!;
      expect(Date.parse(first.nextPollAt!) - Date.parse(first.lastPollAt!)).toBe(1000);
      await until(() => t.reports.length >= 2, 'the second poll recorded', 10_000);
      const second = (await t.store.sources.get('wire'))!;
      expect(Date.parse(second.nextPollAt!) - Date.parse(second.lastPollAt!)).toBe(POLL_DEFAULTS.retryAfterMaxMs);
      expect(second.failures).toBe(2);
    });
  });

  describe.skipIf(skip)('an item without any text is counted as seen once, not at every poll', () => {
    it('three polls of a feed with one such item: seen counts it once; the metric too', async () => {
      const feed = rss(
        '<item><title>Copper rallies on supply fears</title><guid>g-1</guid></item><item><guid>g-2</guid><link>https://ex.com/2</link></item>',
      );
      const t = await setup(scripted([ok(feed)]).fetch);
      await until(() => t.reports.length >= 3, 'three polls', 15_000);
      await t.poller.stop();
      expect(t.reports.slice(0, 3).map((r) => r.seen)).toEqual([2, 0, 0]);
      expect(t.items.get('unusable')).toBe(1);
      expect(await t.store.sources.get('wire')).toMatchObject({ itemsIngested: 1 });
      expect((await t.store.sources.get('wire'))!.itemsSeen).toBe(t.reports.reduce((n, r) => n + r.seen, 0));
      expect((await t.store.sources.get('wire'))!.itemsSeen).toBe(2);
    });
  });
});
reportUnreachable(pg, 5);

describe('the schedule rules bound every number a feed or a server sets', () => {
  const NOW = Date.parse('2026-11-21T12:00:00.000Z');

  it("the feed's floor: whole milliseconds, at most 24 h (10^20 seconds too), none for zero, less or no number", () => {
    expect(feedFloorMs(900)).toBe(900_000);
    expect(feedFloorMs(1e20)).toBe(POLL_DEFAULTS.feedFloorMaxMs);
    expect(feedFloorMs(Number.POSITIVE_INFINITY)).toBe(POLL_DEFAULTS.feedFloorMaxMs);
    expect(feedFloorMs(0.0004)).toBe(0);
    for (const none of [null, 0, -60, Number.NaN]) expect(feedFloorMs(none)).toBeNull();
    expect(POLL_DEFAULTS.feedFloorMaxMs).toBe(24 * HOUR);
  });

  it('after a success: the interval, or the floor when longer, never past 24 h; a floor that is no number is none', () => {
    expect(nextPollAfterSuccess(NOW, 60_000, 6e24)).toBe(NOW + 24 * HOUR);
    expect(nextPollAfterSuccess(NOW, 60_000, Number.NaN)).toBe(NOW + 60_000);
    expect(nextPollAfterSuccess(NOW, 60_000, -5)).toBe(NOW + 60_000);
  });

  it('after a failure: a Retry-After that is no number is none, one that is endless is 6 h, one below zero is none', () => {
    const zero = () => 0;
    expect(nextPollAfterFailure(NOW, 60_000, 1, Number.NaN, zero)).toBe(NOW + 60_000);
    expect(nextPollAfterFailure(NOW, 60_000, 1, Number.POSITIVE_INFINITY, zero)).toBe(
      NOW + POLL_DEFAULTS.retryAfterMaxMs,
    );
    expect(nextPollAfterFailure(NOW, 60_000, 1, -5, zero)).toBe(NOW + 60_000);
    expect(Number.isInteger(nextPollAfterFailure(NOW, 60_000, 1e12, 1e30, zero))).toBe(true);
  });
});

describe('an item that fails at every poll is logged when it starts failing, not at every poll', () => {
  it('the same guid failing again is not logged again; a new one is; one that recovers and fails again is', async () => {
    const warnings: Record<string, unknown>[] = [];
    const recorder = new PollRecorder({
      store: { recordPoll: async () => {} } as unknown as SourceStore,
      owner: 'me',
      clock: () => 0,
      random: () => 0,
      log: { ...silentLog, warn: (fields) => void warnings.push(fields) },
      onScheduled: () => {},
    });
    const rec = {
      name: 'wire',
      everyMs: 60_000,
      failures: 0,
      etag: null,
      lastModified: null,
      lastError: null,
      lastStatus: null,
      lastPollAt: null,
      minIntervalMs: null,
    } as SourceRecord;
    const poll = (...guids: string[]): PollResult => ({
      kind: 'fetched',
      notModified: false,
      at: 0,
      status: 200,
      etag: null,
      lastModified: null,
      minIntervalMs: null,
      outcomes: [],
      unusable: 0,
      failed: guids.map((guid) => ({ guid, errClass: 'TypeError' })),
    });
    await recorder.record(rec, poll('g-1'));
    await recorder.record(rec, poll('g-1'));
    expect(warnings.map((w) => w.guid)).toEqual(['g-1']);
    await recorder.record(rec, poll('g-1', 'g-2'));
    expect(warnings.map((w) => w.guid)).toEqual(['g-1', 'g-2']);
    await recorder.record(rec, poll());
    await recorder.record(rec, poll('g-1'));
    expect(warnings.map((w) => w.guid)).toEqual(['g-1', 'g-2', 'g-1']);
    expect(warnings.every((w) => w.kind === 'source-item' && w.source === 'wire' && w.err_class === 'TypeError')).toBe(
      true,
    );
  });
});

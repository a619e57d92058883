/**
 * The SourceStore behaviour (registry, poll leases, ingest with exact and near dedup, carriers, prune),
 * run against every engine (sources-sqlite.test.ts, sources-postgres.test.ts). `open` gives a fresh,
 * empty store with the given near-duplicate rule; `peer` a second, independent connection to the same
 * data (another process's view); `reopen` closes nothing and opens the same data anew (a restart).
 */
import { expect } from 'vitest';
import { article, OpenedStores, registerStoreTests } from './suite-kit.js';
import { SourceExistsError } from '../../src/store/ports/errors.js';
import type { ItemOutcome, NearDuplicateRule, PollOutcome, SourcedItem, Store } from '../../src/store/ports/index.js';
import { identify } from '../../src/ingest/identity.js';
import { operatorItem, storeOffers } from '../../src/ingest/pipeline.js';
import { parseArticle } from '../../src/ingest/parse.js';
import { parseFeed } from '../../src/sources/feed/index.js';
import { toSourcedItems } from '../../src/sources/pipeline.js';
import { turnCounter } from '../ingest/support.js';
import { INGEST_SLICE_ITEMS } from '../../src/store/ports/ingest-slice.js';

export interface SourcesHarness {
  open(rule: NearDuplicateRule): Promise<Store>;
  /** Another connection (process) on the same data, with the same rule. */
  peer(store: Store): Promise<Store>;
  cleanup(): Promise<void>;
  skip?: boolean;
  /** Runs SQL on the store's data (both engines understand the statements the suite sends). */
  exec(store: Store, sql: string): Promise<void>;
  /**
   * Puts the store back to before the identity migration (its columns dropped, its version unapplied); `peer` applies
   * it again.
   */
  rewindIdentity(store: Store): Promise<void>;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-11-21T12:00:00.000Z');

/**
 * A test rule standing in for src/dedup/near.ts: the same words (case and punctuation aside) are the
 * same story; the key is the first word. The window is the interface's 24 h.
 */
const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9 ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
export const testRule: NearDuplicateRule = {
  windowMs: DAY,
  isNearDuplicate: (a, b) => words(a).sort().join(' ') === words(b).sort().join(' '),
};
const keysOf = (content: string) => [`w:${words(content)[0] ?? ''}`];

export const item = (source: string, externalId: string, content: string, url: string | null = null): SourcedItem => ({
  source,
  externalId,
  canonicalUrl: url,
  article: article(content, { source, url }),
  nearKeys: keysOf(content),
});

const poll = (over: Partial<PollOutcome> = {}): PollOutcome => ({
  at: T0,
  status: 200,
  error: null,
  etag: null,
  lastModified: null,
  nextPollAt: T0 + 60_000,
  failures: 0,
  minIntervalMs: null,
  seen: 0,
  ingested: 0,
  deduplicated: 0,
  ...over,
});

/** The article an outcome names (none for a failed item). */
const idOf = (o: ItemOutcome | undefined) => (o !== undefined && 'id' in o ? o.id : undefined);

const src = (name: string, everyMs = 30_000) => ({
  name,
  url: `http://127.0.0.1:1/${name}.xml`,
  everyMs,
  urgency: 'auto' as const,
});

export function describeSourceStore(name: string, h: SourcesHarness): number {
  const groups = new Map<string, [string, () => Promise<void>][]>();
  let count = 0;
  const test = (group: string, title: string, fn: () => Promise<void>) => {
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group)!.push([title, fn]);
    count++;
  };
  const opened = new OpenedStores();
  const open = async () => opened.track(await h.open(testRule));
  const peer = async (s: Store) => opened.track(await h.peer(s));

  // ---- registry ----

  test(
    'registry',
    'add, get, list in creation order, pause, resume, remove; the version changes each time',
    async () => {
      const s = await open();
      const v0 = await s.sources.registryVersion();
      const a = await s.sources.add(src('wire-a', 30_000), T0);
      expect(a).toEqual({
        name: 'wire-a',
        url: 'http://127.0.0.1:1/wire-a.xml',
        everyMs: 30_000,
        urgency: 'auto',
        paused: false,
        createdAt: new Date(T0).toISOString(),
        etag: null,
        lastModified: null,
        lastPollAt: null,
        lastOkAt: null,
        failingSince: null,
        lastArticleAt: null,
        lastStatus: null,
        lastError: null,
        nextPollAt: null,
        failures: 0,
        minIntervalMs: null,
        itemsSeen: 0,
        itemsIngested: 0,
        itemsDeduplicated: 0,
      });
      const v1 = await s.sources.registryVersion();
      expect(v1).not.toBe(v0);
      await s.sources.add({ ...src('b-wire'), urgency: 'breaking' }, T0 + 1);
      expect((await s.sources.list()).map((r) => r.name)).toEqual(['wire-a', 'b-wire']);
      expect(await s.sources.get('b-wire')).toMatchObject({ urgency: 'breaking' });
      expect(await s.sources.get('missing')).toBeUndefined();

      const paused = await s.sources.setPaused('wire-a', true, T0 + 2);
      expect(paused?.paused).toBe(true);
      const v2 = await s.sources.registryVersion();
      expect(v2).not.toBe(v1);
      const resumed = await s.sources.setPaused('wire-a', false, T0 + 3);
      expect(resumed).toMatchObject({ paused: false, nextPollAt: new Date(T0 + 3).toISOString() });
      const v3 = await s.sources.registryVersion();
      expect(v3).not.toBe(v2);
      expect(await s.sources.setPaused('missing', true, T0)).toBeUndefined();
      expect(await s.sources.registryVersion()).toBe(v3);

      expect(await s.sources.remove('wire-a')).toBe(true);
      expect(await s.sources.remove('wire-a')).toBe(false);
      expect(await s.sources.registryVersion()).not.toBe(v3);
      expect((await s.sources.list()).map((r) => r.name)).toEqual(['b-wire']);
    },
  );

  test('registry', 'a name taken throws SourceExistsError and changes nothing', async () => {
    const s = await open();
    await s.sources.add(src('wire'), T0);
    const v = await s.sources.registryVersion();
    const err = await s.sources
      .add({ ...src('wire'), url: 'http://127.0.0.1:1/other.xml' }, T0 + 1)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceExistsError);
    expect(await s.sources.registryVersion()).toBe(v);
    expect((await s.sources.get('wire'))?.url).toBe('http://127.0.0.1:1/wire.xml');
  });

  test('registry', "another process's change is seen (list and version)", async () => {
    const s = await open();
    const p = await peer(s);
    const v = await s.sources.registryVersion();
    await p.sources.add(src('from-peer'), T0);
    expect(await s.sources.registryVersion()).not.toBe(v);
    expect((await s.sources.list()).map((r) => r.name)).toEqual(['from-peer']);
  });

  // ---- leases ----

  test('poll leases', 'a due source is leased to one owner at a time, across two connections', async () => {
    const s = await open();
    const p = await peer(s);
    for (const n of ['a', 'b', 'c']) await s.sources.add(src(n), T0);
    const [mine, theirs] = await Promise.all([
      s.sources.claimDue('one', T0, 10_000, 10),
      p.sources.claimDue('two', T0, 10_000, 10),
    ]);
    const names = [...mine, ...theirs].map((r) => r.name).sort();
    expect(names).toEqual(['a', 'b', 'c']);
    // Nothing left to claim while the leases live.
    expect(await s.sources.claimDue('three', T0 + 9_999, 10_000, 10)).toEqual([]);
    expect(await p.sources.claimDue('two', T0 + 5_000, 10_000, 10)).toEqual([]);
  });

  test('poll leases', 'limit, paused and not yet due sources are respected', async () => {
    const s = await open();
    for (const n of ['a', 'b', 'c', 'd']) await s.sources.add(src(n), T0);
    await s.sources.setPaused('c', true, T0);
    const first = await s.sources.claimDue('one', T0, 10_000, 1);
    expect(first.map((r) => r.name)).toEqual(['a']);
    await s.sources.recordPoll('a', 'one', poll({ nextPollAt: T0 + 60_000 }));
    const rest = await s.sources.claimDue('one', T0 + 1, 10_000, 10);
    expect(rest.map((r) => r.name)).toEqual(['b', 'd']);
    for (const n of ['b', 'd']) await s.sources.recordPoll(n, 'one', poll({ nextPollAt: T0 + 120_000 }));
    // a is due again at its next poll time (b and d later).
    expect((await s.sources.claimDue('two', T0 + 59_999, 10_000, 10)).map((r) => r.name)).toEqual([]);
    expect((await s.sources.claimDue('two', T0 + 60_000, 10_000, 10)).map((r) => r.name)).toEqual(['a']);
  });

  test('poll leases', 'an expired lease (its owner died) is taken by another owner', async () => {
    const s = await open();
    const p = await peer(s);
    await s.sources.add(src('a'), T0);
    expect((await s.sources.claimDue('dead', T0, 10_000, 10)).map((r) => r.name)).toEqual(['a']);
    expect(await p.sources.claimDue('alive', T0 + 9_999, 10_000, 10)).toEqual([]);
    expect((await p.sources.claimDue('alive', T0 + 10_000, 10_000, 10)).map((r) => r.name)).toEqual(['a']);
    // The dead owner's late record adds its counters but leaves the new owner's lease alone.
    await s.sources.recordPoll('a', 'dead', poll({ at: T0 + 10_001, seen: 1, nextPollAt: T0 }));
    expect(await s.sources.claimDue('third', T0 + 10_002, 10_000, 10)).toEqual([]);
  });

  // ---- poll records ----

  test(
    'poll records',
    'recordPoll adds the counters, stores status, error, validators and the next poll, and releases the lease',
    async () => {
      const s = await open();
      await s.sources.add(src('a'), T0);
      await s.sources.claimDue('me', T0, 10_000, 10);
      await s.sources.recordPoll(
        'a',
        'me',
        poll({
          at: T0 + 1000,
          status: 200,
          etag: '"v1"',
          lastModified: 'Sat, 21 Nov 2026 12:00:00 GMT',
          seen: 5,
          ingested: 3,
          deduplicated: 2,
          nextPollAt: T0 + 31_000,
          minIntervalMs: 60_000,
        }),
      );
      expect(await s.sources.get('a')).toMatchObject({
        lastPollAt: new Date(T0 + 1000).toISOString(),
        lastStatus: 200,
        lastError: null,
        etag: '"v1"',
        lastModified: 'Sat, 21 Nov 2026 12:00:00 GMT',
        nextPollAt: new Date(T0 + 31_000).toISOString(),
        failures: 0,
        minIntervalMs: 60_000,
        itemsSeen: 5,
        itemsIngested: 3,
        itemsDeduplicated: 2,
      });
      // Released: claimable as soon as it is due, by anyone.
      expect((await s.sources.claimDue('other', T0 + 31_000, 10_000, 10)).map((r) => r.name)).toEqual(['a']);
      await s.sources.recordPoll(
        'a',
        'other',
        poll({
          at: T0 + 32_000,
          status: 503,
          error: 'http: 503 Service Unavailable',
          failures: 1,
          seen: 0,
          nextPollAt: T0 + 40_000,
          etag: '"v1"',
        }),
      );
      expect(await s.sources.get('a')).toMatchObject({
        lastStatus: 503,
        lastError: 'http: 503 Service Unavailable',
        failures: 1,
        itemsSeen: 5,
        itemsIngested: 3,
        itemsDeduplicated: 2,
      });
      await s.sources.recordPoll(
        'a',
        'other',
        poll({ at: T0 + 40_000, seen: 2, ingested: 1, deduplicated: 1, nextPollAt: T0 + 70_000 }),
      );
      expect(await s.sources.get('a')).toMatchObject({
        lastStatus: 200,
        lastError: null,
        failures: 0,
        itemsSeen: 7,
        itemsIngested: 4,
        itemsDeduplicated: 3,
      });
    },
  );

  test(
    'poll records',
    'recordPoll keeps the last ok poll, the start of the run of failures and the last poll that stored an article',
    async () => {
      const s = await open();
      await s.sources.add(src('a'), T0);
      const at = (ms: number) => new Date(ms).toISOString();
      const times = async () => {
        const r = (await s.sources.get('a'))!;
        return { lastOkAt: r.lastOkAt, failingSince: r.failingSince, lastArticleAt: r.lastArticleAt };
      };
      await s.sources.recordPoll('a', 'me', poll({ at: T0 + 1000, seen: 2, ingested: 0, deduplicated: 2 }));
      expect(await times()).toEqual({ lastOkAt: at(T0 + 1000), failingSince: null, lastArticleAt: null });
      await s.sources.recordPoll('a', 'me', poll({ at: T0 + 2000, seen: 1, ingested: 1 }));
      expect(await times()).toEqual({ lastOkAt: at(T0 + 2000), failingSince: null, lastArticleAt: at(T0 + 2000) });
      // A failure starts the run; the next one continues it (its start stays); the last ok poll is kept.
      await s.sources.recordPoll('a', 'me', poll({ at: T0 + 3000, status: 503, error: 'http: 503', failures: 1 }));
      expect(await times()).toEqual({
        lastOkAt: at(T0 + 2000),
        failingSince: at(T0 + 3000),
        lastArticleAt: at(T0 + 2000),
      });
      await s.sources.recordPoll('a', 'me', poll({ at: T0 + 4000, status: null, error: 'timeout: 10 s', failures: 2 }));
      expect(await times()).toEqual({
        lastOkAt: at(T0 + 2000),
        failingSince: at(T0 + 3000),
        lastArticleAt: at(T0 + 2000),
      });
      // A success (here: not modified, nothing new) ends the run.
      await s.sources.recordPoll('a', 'me', poll({ at: T0 + 5000, status: 304 }));
      expect(await times()).toEqual({ lastOkAt: at(T0 + 5000), failingSince: null, lastArticleAt: at(T0 + 2000) });
      // A new run of failures starts at its own first failure.
      await s.sources.recordPoll('a', 'me', poll({ at: T0 + 6000, status: 500, error: 'http: 500', failures: 1 }));
      expect(await times()).toMatchObject({ lastOkAt: at(T0 + 5000), failingSince: at(T0 + 6000) });
    },
  );

  test(
    'poll records',
    "every number of a record is kept within its bounds, whatever the caller passed (a feed's ttl of 10^20 minutes, a NaN)",
    async () => {
      const s = await open();
      await s.sources.add(src('a'), T0);
      await s.sources.claimDue('me', T0, 10_000, 10);
      // What an unbounded ttl, Retry-After or counter would make: past PostgreSQL's bigint and integer, a float in
      // SQLite.
      await s.sources.recordPoll(
        'a',
        'me',
        poll({
          at: T0,
          status: 70_000,
          minIntervalMs: 6e24,
          nextPollAt: 1e25,
          failures: 1e12,
          seen: Number.NaN,
          ingested: 2.6,
          deduplicated: -3,
        }),
      );
      expect(await s.sources.get('a')).toMatchObject({
        lastPollAt: new Date(T0).toISOString(),
        lastStatus: null,
        minIntervalMs: 24 * HOUR,
        nextPollAt: new Date(8_640_000_000_000_000).toISOString(),
        failures: 2_147_483_647,
        itemsSeen: 0,
        itemsIngested: 3,
        itemsDeduplicated: 0,
      });
      // Stored as integers within the columns, not as floats (SQLite keeps what it is given).
      await s.sources.recordPoll(
        'a',
        'me',
        poll({ at: T0 + 0.5, nextPollAt: Number.NaN, minIntervalMs: Number.POSITIVE_INFINITY, status: 200.7 }),
      );
      expect(await s.sources.get('a')).toMatchObject({
        lastPollAt: new Date(T0 + 1).toISOString(),
        nextPollAt: new Date(T0 + 1).toISOString(),
        minIntervalMs: 24 * HOUR,
        lastStatus: 200,
      });
      await s.sources.recordPoll('a', 'me', poll({ error: 'x'.repeat(10_000), minIntervalMs: -5 }));
      const r = (await s.sources.get('a'))!;
      expect(r.lastError!.length).toBe(2000);
      expect(r.minIntervalMs).toBeNull();
    },
  );

  // ---- ingest: items without text ----

  test(
    'items without text',
    'recordTextlessItems answers how many were new: a feed that keeps listing one counts it once',
    async () => {
      const s = await open();
      expect(await s.sources.recordTextlessItems('w', ['g-1', 'g-2', 'g-2'], T0)).toBe(2);
      expect(await s.sources.recordTextlessItems('w', ['g-1', 'g-2'], T0 + 1000)).toBe(0);
      expect(await s.sources.recordTextlessItems('w', ['g-2', 'g-3'], T0 + 2000)).toBe(1);
      // Per source; and across connections (another process, a restart).
      expect(await s.sources.recordTextlessItems('other', ['g-1'], T0)).toBe(1);
      expect(await (await peer(s)).sources.recordTextlessItems('w', ['g-1', 'g-4'], T0 + 3000)).toBe(1);
      expect(await s.sources.recordTextlessItems('w', [], T0)).toBe(0);
    },
  );

  test(
    'items without text',
    'an item whose own id reads like the key of such a record is stored, not taken for it',
    async () => {
      const s = await open();
      await s.sources.recordTextlessItems('w', ['g-9'], T0);
      expect(
        (await s.sources.ingestItems([item('w', 'textless:g-9', 'An id that looks like a record key')], T0 + 1000))[0]!
          .status,
      ).toBe('stored');
    },
  );

  test(
    'items without text',
    'their records never stand for an item with text under the same id, and are pruned as the others',
    async () => {
      const s = await open();
      await s.sources.recordTextlessItems('w', ['g-1'], T0);
      // The item gains a title: it is a new item (stored), not the same item as the record without text.
      expect((await s.sources.ingestItems([item('w', 'g-1', 'Now with a headline')], T0 + 1000))[0]!.status).toBe(
        'stored',
      );
      expect(await s.sources.recordTextlessItems('w', ['g-1'], T0 + 2000)).toBe(0);
      // Retention counts from the last sighting: the item's record (T0 + 1000) goes first, then the one without text
      // (T0 + 2000).
      expect(await s.sources.pruneSeen(30 * DAY, T0 + 30 * DAY + 1500)).toBe(1);
      expect(await s.sources.recordTextlessItems('w', ['g-1'], T0 + 30 * DAY + 1500)).toBe(0);
      expect(await s.sources.pruneSeen(30 * DAY, T0 + 61 * DAY)).toBe(1);
      expect(await s.sources.recordTextlessItems('w', ['g-1'], T0 + 61 * DAY)).toBe(1);
    },
  );

  // ---- ingest: one item's unexpected error ----

  test(
    'failed items',
    'an item whose dedup step throws is answered failed, leaves no record, and the rest of the batch is stored',
    async () => {
      const throwing: NearDuplicateRule = {
        windowMs: DAY,
        isNearDuplicate: (a, b) => {
          if (a.includes('poison') || b.includes('poison'))
            throw new TypeError('a message that names the input: poison');
          return testRule.isNearDuplicate(a, b);
        },
      };
      const s = opened.track(await h.open(throwing));
      await s.sources.ingestItems([item('wire-a', 'a-1', 'Copper poison rally')], T0);
      const out = await s.sources.ingestItems(
        [
          item('wire-b', 'b-1', 'Tin slips'),
          item('wire-b', 'b-2', 'Copper poison rally again'),
          item('wire-b', 'b-3', 'Zinc climbs'),
          item('wire-c', 'c-1', 'Tin slips'),
        ],
        T0 + 1000,
      );
      expect(out.map((o) => o.status)).toEqual(['stored', 'failed', 'stored', 'duplicate']);
      expect(out[1]).toEqual({ status: 'failed', errClass: 'TypeError' });
      expect(out[3]).toMatchObject({ reason: 'near-duplicate', id: idOf(out[0]) });
      expect(await s.articles.count()).toBe(3);
      // Nothing of it was written: the same item offered again is planned afresh (and fails again), not a duplicate.
      expect((await s.sources.ingestItems([item('wire-b', 'b-2', 'Copper poison rally again')], T0 + 2000))[0]).toEqual(
        { status: 'failed', errClass: 'TypeError' },
      );
    },
  );

  // ---- ingest: exact dedup ----

  test(
    'exact dedup',
    'the same (source, external id) is stored once, across calls, connections and a restart',
    async () => {
      const s = await open();
      const first = await s.sources.ingestItems([item('wire', 'g-1', 'Acme beats estimates', 'https://ex.com/a')], T0);
      expect(first).toEqual([{ status: 'stored', id: expect.any(String), received_at: new Date(T0).toISOString() }]);
      const id = (first[0] as { id: string }).id;
      // Same guid, other text and URL (a feed that edits its item): still the same item.
      expect(
        await s.sources.ingestItems(
          [item('wire', 'g-1', 'Acme beats estimates, shares up', 'https://ex.com/a2')],
          T0 + 1000,
        ),
      ).toEqual([{ status: 'duplicate', reason: 'same-item', id }]);
      // The same external id from another source is another item.
      expect(
        (await s.sources.ingestItems([item('other', 'g-1', 'Zeta files for bankruptcy')], T0 + 2000))[0]!.status,
      ).toBe('stored');
      const restarted = await peer(s);
      await s.close();
      opened.forget(s);
      expect(await restarted.sources.ingestItems([item('wire', 'g-1', 'Acme beats estimates')], T0 + 3000)).toEqual([
        { status: 'duplicate', reason: 'same-item', id },
      ]);
      expect(await restarted.articles.count()).toBe(2);
    },
  );

  test(
    'exact dedup',
    'the same canonical URL from another item or source is a duplicate, and the source is recorded as a carrier',
    async () => {
      const s = await open();
      const [a] = await s.sources.ingestItems(
        [item('wire-a', 'a-1', 'Acme beats estimates', 'https://ex.com/story')],
        T0,
      );
      const id = (a as { id: string }).id;
      expect(
        await s.sources.ingestItems(
          [item('wire-b', 'b-9', 'Totally different words here', 'https://ex.com/story')],
          T0 + 1000,
        ),
      ).toEqual([{ status: 'duplicate', reason: 'same-url', id }]);
      expect((await s.sources.carriersOf(id)).map((c) => c.source)).toEqual(['wire-a', 'wire-b']);
      // wire-b's item is now known by its own id too.
      expect(
        await s.sources.ingestItems([item('wire-b', 'b-9', 'Totally different words here', null)], T0 + 2000),
      ).toEqual([{ status: 'duplicate', reason: 'same-item', id }]);
      expect(await s.articles.count()).toBe(1);
    },
  );

  test(
    'exact dedup',
    'one batch: each item once, in order, duplicates inside the batch point to the stored one',
    async () => {
      const s = await open();
      const out = await s.sources.ingestItems(
        [
          item('w', '1', 'One story'),
          item('w', '1', 'One story again'),
          item('w', '2', 'Two story', 'https://ex.com/2'),
          item('x', '7', 'Seven', 'https://ex.com/2'),
        ],
        () => T0,
      );
      expect(out.map((o) => o.status)).toEqual(['stored', 'duplicate', 'stored', 'duplicate']);
      expect(out[1]).toEqual({ status: 'duplicate', reason: 'same-item', id: (out[0] as { id: string }).id });
      expect(out[3]).toEqual({ status: 'duplicate', reason: 'same-url', id: (out[2] as { id: string }).id });
      const ids = out.filter((o) => o.status === 'stored').map((o) => o.id);
      // Through the ordinary insert: in the change feed, in order, ids ascending.
      const feed = await s.articles.feedAfter(0, 10);
      expect(feed.map((e) => e.article.id)).toEqual(ids);
      expect(feed.map((e) => e.article.content)).toEqual(['One story', 'Two story']);
    },
  );

  test('exact dedup', 'two connections ingesting the same items at once store each one once', async () => {
    const s = await open();
    const p = await peer(s);
    const batch = Array.from({ length: 20 }, (_, i) => item('wire', `g-${i}`, `Story number ${i} about something`));
    const [x, y] = await Promise.all([s.sources.ingestItems(batch, Date.now), p.sources.ingestItems(batch, Date.now)]);
    expect(await s.articles.count()).toBe(20);
    const stored = [...x, ...y].filter((o) => o.status === 'stored').length;
    expect(stored).toBe(20);
    for (let i = 0; i < 20; i++) expect(idOf(x[i])).toBe(idOf(y[i]));
  });

  // ---- ingest: near dedup ----

  test(
    'near dedup',
    'the same story from another source within the window is merged; the source becomes a carrier',
    async () => {
      const s = await open();
      const [a] = await s.sources.ingestItems(
        [item('wire-a', 'a-1', 'Fed raises rates by 25 bp', 'https://a.example/1')],
        T0,
      );
      const id = (a as { id: string }).id;
      const [b] = await s.sources.ingestItems(
        [item('wire-b', 'b-1', 'FED RAISES RATES BY 25 BP!', 'https://b.example/9')],
        T0 + 23 * HOUR,
      );
      expect(b).toEqual({ status: 'duplicate', reason: 'near-duplicate', id });
      const carriers = await s.sources.carriersOf(id);
      expect(carriers).toEqual([
        { source: 'wire-a', url: 'https://a.example/1', at: new Date(T0).toISOString(), reason: null },
        {
          source: 'wire-b',
          url: 'https://b.example/9',
          at: new Date(T0 + 23 * HOUR).toISOString(),
          reason: 'near-duplicate',
        },
      ]);
      expect(await s.articles.count()).toBe(1);
      // Merged once: wire-b's item is known by its id from now on.
      expect(
        (await s.sources.ingestItems([item('wire-b', 'b-1', 'FED RAISES RATES BY 25 BP!')], T0 + 23 * HOUR + 1))[0],
      ).toEqual({ status: 'duplicate', reason: 'same-item', id });
    },
  );

  test('near dedup', 'not beyond the window, not a different story sharing a key, not the same source', async () => {
    const s = await open();
    await s.sources.ingestItems([item('wire-a', 'a-1', 'Fed raises rates by 25 bp')], T0);
    // Shares the key ("fed") but is another story.
    expect((await s.sources.ingestItems([item('wire-c', 'c-1', 'Fed holds rates steady')], T0 + HOUR))[0]!.status).toBe(
      'stored',
    );
    // The same source repeating a story under a new id is its own business (an update): stored.
    expect(
      (await s.sources.ingestItems([item('wire-a', 'a-2', 'fed raises rates by 25 bp')], T0 + 2 * HOUR))[0]!.status,
    ).toBe('stored');
    // More than 24 h after the last copy: a new article.
    expect(
      (await s.sources.ingestItems([item('wire-b', 'b-1', 'Fed raises rates by 25 bp')], T0 + 2 * HOUR + DAY + 1))[0]!
        .status,
    ).toBe('stored');
    expect(await s.articles.count()).toBe(4);
  });

  test('near dedup', 'within one batch, the second source of a story is merged into the first', async () => {
    const s = await open();
    const out = await s.sources.ingestItems(
      [item('wire-a', 'a-1', 'Oil jumps 5% on supply cut'), item('wire-b', 'b-1', 'oil jumps 5% on supply cut')],
      T0,
    );
    expect(out[0]!.status).toBe('stored');
    expect(out[1]).toEqual({ status: 'duplicate', reason: 'near-duplicate', id: idOf(out[0]) });
    expect((await s.sources.carriersOf(idOf(out[0])!)).map((c) => c.source)).toEqual(['wire-a', 'wire-b']);
  });

  // ---- identity: canonical links, one wire's repeats, operator lines (src/ingest/identity.ts, pipeline.ts) ----

  /** An item through the real identity step (canonical link, repeat key, near keys). */
  const wireItem = (
    source: string,
    id: string,
    content: string,
    url: string | null,
    published_at: string | null = null,
  ) => identify(source, id, article(content, { url, published_at }));

  test('identity', 'every spelling of one link from another wire is the stored story (same-url)', async () => {
    const s = await open();
    const canonical = 'https://www.example.com/markets/2026/11/21/fed-raises-rates';
    const [first] = await s.sources.ingestItems(
      [wireItem('wire-a', 'a-1', 'Fed raises rates by a quarter point', canonical)],
      T0,
    );
    expect(first!.status).toBe('stored');
    const id = (first as { id: string }).id;
    const spellings = [
      'HTTPS://WWW.EXAMPLE.COM:443/markets/2026/11/21/fed-raises-rates',
      'https://www.example.com/markets/2026/11/21/fed-raises-rates#comments',
      'https://www.example.com/markets/2026/11/21/fed-raises-rates/',
      'https://www.example.com/markets/2026/11/21/fed-raises-rates?utm_source=rss&utm_medium=feed&fbclid=x&gclid=y&mc_cid=1&mc_eid=2&ocid=msn&cmpid=rss',
      'https://www.example.com/markets/2026/11/21/fed-raises-rates/amp',
      'https://www.example.com/markets/2026/11/21/fed-raises-rates/amp/',
      'https://www.example.com/markets/2026/11/21/fed-raises-rates?outputType=amp',
      'https://amp.example.com/markets/2026/11/21/fed-raises-rates'.replace('amp.example.com', 'amp.www.example.com'),
      `https://redir.example.com/redir/online/mercado/rss091/*${canonical}`,
      `https://news.google.example/url?url=${encodeURIComponent(canonical)}`,
      `https://l.example/l.php?u=${encodeURIComponent(canonical)}&h=x`,
    ];
    const out = await s.sources.ingestItems(
      spellings.map((u, i) => wireItem('wire-b', `b-${i}`, `Headline number ${i} in other words entirely`, u)),
      T0 + 1000,
    );
    expect(out).toEqual(spellings.map(() => ({ status: 'duplicate', reason: 'same-url', id })));
    expect(await s.articles.count()).toBe(1);
    const [stored] = await s.articles.getMany([id]);
    expect(stored).toMatchObject({ source: 'wire-a', url: canonical });
  });

  test(
    'identity',
    'an ISO-8859-1 feed listing one story under its canonical link and its redirector link stores it once',
    async () => {
      const s = await open();
      const canonical =
        'https://www1.folha.example.com.br/mercado/2026/11/dolar-fecha-em-alta-apos-decisao-do-copom.shtml';
      const xml = `<?xml version="1.0" encoding="ISO-8859-1"?>
<rss version="0.91"><channel><title>Mercado</title><link>https://www1.folha.example.com.br/mercado/</link><description>Mercado</description>
<item><title>Dólar fecha em alta após decisão do Copom</title><link>https://redir.folha.example.com.br/redir/online/mercado/rss091/*${canonical}</link><pubDate>Fri, 21 Nov 2026 18:30:00 -0300</pubDate></item>
<item><title>Dólar fecha em alta após decisão do Copom</title><link>${canonical}</link><pubDate>Fri, 21 Nov 2026 18:30:00 -0300</pubDate></item>
</channel></rss>`;
      const feed = parseFeed(Buffer.from(xml, 'latin1'), {
        contentType: 'application/rss+xml; charset=ISO-8859-1',
        baseUrl: 'https://feeds.folha.example.com.br/mercado/rss091.xml',
      });
      const items = toSourcedItems({ name: 'folha-mercado', urgency: 'auto' }, feed.items);
      expect(items.map((i) => i.article.content)).toEqual([
        'Dólar fecha em alta após decisão do Copom',
        'Dólar fecha em alta após decisão do Copom',
      ]);
      const out = await s.sources.ingestItems(items, T0);
      expect(out[0]!.status).toBe('stored');
      const id = (out[0] as { id: string }).id;
      expect(out[1]).toMatchObject({ status: 'duplicate', id });
      expect(await s.articles.count()).toBe(1);
      expect((await s.articles.getMany([id]))[0]).toMatchObject({ source: 'folha-mercado', url: canonical });
      // Polled again: nothing new.
      expect((await s.sources.ingestItems(items, T0 + HOUR)).map((o) => o.status)).toEqual(['duplicate', 'duplicate']);
    },
  );

  test(
    'identity',
    "one wire's same headline and published time under another id or link is the same item (same-headline)",
    async () => {
      const s = await open();
      const at = '2026-11-21T11:00:00Z';
      const [a] = await s.sources.ingestItems(
        [wireItem('wire-a', 'a-1', 'Acme Corp beats estimates, shares jump', 'https://a.example/1', at)],
        T0,
      );
      const id = (a as { id: string }).id;
      // Another id and link, the same text (case, punctuation and spacing aside) and the same instant in another
      // offset.
      const out = await s.sources.ingestItems(
        [
          wireItem(
            'wire-a',
            'a-2',
            'ACME CORP BEATS ESTIMATES — SHARES JUMP',
            'https://a.example/2',
            '2026-11-21T12:00:00+01:00',
          ),
          wireItem('wire-a', 'a-3', 'Acme Corp beats estimates, shares jump', null, at),
        ],
        T0 + HOUR,
      );
      expect(out).toEqual([
        { status: 'duplicate', reason: 'same-headline', id },
        { status: 'duplicate', reason: 'same-headline', id },
      ]);
      expect(await s.articles.count()).toBe(1);
      // The repeat is no carrier: the same source carried it once.
      expect((await s.sources.carriersOf(id)).map((c) => c.source)).toEqual(['wire-a']);
      expect((await s.sources.itemsOf(id)).map((r) => [r.externalId, r.reason])).toEqual([
        ['a-1', null],
        ['a-2', 'same-headline'],
        ['a-3', 'same-headline'],
      ]);
    },
  );

  test('identity', 'repeats inside one batch are found too', async () => {
    const s = await open();
    const at = '2026-11-21T11:00:00Z';
    const out = await s.sources.ingestItems(
      [
        wireItem('wire-a', 'a-1', 'Gold hits record high', null, at),
        wireItem('wire-a', 'a-2', 'Gold hits record high', null, at),
      ],
      T0,
    );
    expect(out[1]).toEqual({ status: 'duplicate', reason: 'same-headline', id: (out[0] as { id: string }).id });
  });

  test('identity', 'a genuinely updated headline under the same id stays one article', async () => {
    const s = await open();
    const [a] = await s.sources.ingestItems(
      [wireItem('wire-a', 'a-1', 'Acme to buy Beta for $2bn', 'https://a.example/1', '2026-11-21T11:00:00Z')],
      T0,
    );
    const [b] = await s.sources.ingestItems(
      [
        wireItem(
          'wire-a',
          'a-1',
          'Acme to buy Beta for $2.4bn in cash and stock',
          'https://a.example/1',
          '2026-11-21T11:05:00Z',
        ),
      ],
      T0 + 60_000,
    );
    expect(b).toEqual({ status: 'duplicate', reason: 'same-item', id: (a as { id: string }).id });
    expect(await s.articles.count()).toBe(1);
  });

  test(
    'identity',
    "a wire's recurring headline on another day is a new story; undated, a repeat only within the window",
    async () => {
      const s = await open();
      const headline = 'Wall Street opens higher as tech rallies';
      const [mon] = await s.sources.ingestItems(
        [wireItem('wire-a', 'a-mon', headline, 'https://a.example/mon', '2026-11-23T14:30:00Z')],
        T0,
      );
      const [tue] = await s.sources.ingestItems(
        [wireItem('wire-a', 'a-tue', headline, 'https://a.example/tue', '2026-11-24T14:30:00Z')],
        T0 + DAY,
      );
      expect(mon!.status).toBe('stored');
      expect(tue!.status).toBe('stored');
      // Without a published time: a repeat within the near window, a new story after it.
      const [u1] = await s.sources.ingestItems([wireItem('wire-a', 'u-1', 'Markets open mixed', null)], T0);
      const [u2] = await s.sources.ingestItems([wireItem('wire-a', 'u-2', 'Markets open mixed', null)], T0 + 2 * HOUR);
      const [u3] = await s.sources.ingestItems([wireItem('wire-a', 'u-3', 'Markets open mixed', null)], T0 + 2 * DAY);
      expect(u2).toEqual({ status: 'duplicate', reason: 'same-headline', id: (u1 as { id: string }).id });
      expect(u3!.status).toBe('stored');
      // ...and the next day's repeat of that one is its duplicate, not the first's.
      const [u4] = await s.sources.ingestItems(
        [wireItem('wire-a', 'u-4', 'Markets open mixed', null)],
        T0 + 2 * DAY + HOUR,
      );
      expect(u4).toEqual({ status: 'duplicate', reason: 'same-headline', id: (u3 as { id: string }).id });
      // A dated item and an undated one with the same text are not repeats of each other.
      const [d] = await s.sources.ingestItems(
        [wireItem('wire-a', 'd-1', 'Markets open mixed', null, '2026-11-23T14:30:00Z')],
        T0 + 2 * DAY + 2 * HOUR,
      );
      expect(d!.status).toBe('stored');
    },
  );

  test(
    'identity',
    "another wire's same headline and time is no repeat of this wire (the near-duplicate rule decides)",
    async () => {
      const s = await open();
      const at = '2026-11-21T11:00:00Z';
      const [a] = await s.sources.ingestItems([wireItem('wire-a', 'a-1', 'Oil jumps on supply cut', null, at)], T0);
      const [b] = await s.sources.ingestItems(
        [wireItem('wire-b', 'b-1', 'Oil jumps on supply cut', null, at)],
        T0 + 1000,
      );
      expect(b).toEqual({ status: 'duplicate', reason: 'near-duplicate', id: (a as { id: string }).id });
      expect(await s.sources.carriersOf((a as { id: string }).id)).toMatchObject([
        { source: 'wire-a', reason: null },
        { source: 'wire-b', reason: 'near-duplicate' },
      ]);
    },
  );

  test(
    'identity',
    'operator lines: the same NDJSON twice stores nothing the second time; a link a wire brought is a duplicate',
    async () => {
      const s = await open();
      const line = (o: object) => {
        const r = parseArticle(o);
        if (!r.ok) throw new Error(r.error);
        return operatorItem(r.article);
      };
      const [w] = await s.sources.ingestItems(
        [
          wireItem(
            'wire-a',
            'a-1',
            'Nvidia beats on data-center revenue',
            'https://www.cnbc.example/2026/11/21/nvidia.html',
          ),
        ],
        T0,
      );
      const lines = [
        { content: 'ECB holds rates, Lagarde says the fight is not over' },
        { content: 'Bitcoin tops $110,000', published_at: '2026-11-21T10:00:00Z', source: 'desk' },
        {
          content: 'Nvidia results: what the street says',
          url: 'https://www.cnbc.example/2026/11/21/nvidia.html?utm_source=twitter',
        },
      ];
      const first = await storeOffers(
        lines.map((o, i) => ({ line: i + 1, item: line(o) })),
        s.sources,
        () => T0 + 1000,
      );
      expect(first.results.map((r) => r.status)).toEqual(['stored', 'stored', 'duplicate']);
      expect(first.results[2]).toMatchObject({
        status: 'duplicate',
        reason: 'same-url',
        id: (w as { id: string }).id,
        source: 'operator',
      });
      const again = await storeOffers(
        lines.map((o, i) => ({ line: i + 1, item: line(o) })),
        s.sources,
        () => T0 + 2000,
      );
      expect(again).toMatchObject({ stored: 0, duplicates: 3, invalid: 0 });
      expect(await s.articles.count()).toBe(3);
      // A line without source is scoped to `operator` for dedup and shows no source; a named source is shown.
      const stored = await s.articles.getMany(first.results.flatMap((r) => (r.status === 'stored' ? [r.id] : [])));
      expect(stored.map((a) => [a.source, a.url])).toEqual([
        [null, null],
        ['desk', null],
      ]);
      expect((await s.sources.carriersOf(stored[0]!.id)).map((c) => c.source)).toEqual(['operator']);
    },
  );

  test(
    'identity',
    'every article carries source and url in the list JSON and the change feed, null when unknown',
    async () => {
      const s = await open();
      await s.sources.ingestItems(
        [wireItem('wire-a', 'a-1', 'Copper rallies', 'https://a.example/copper?utm_source=x')],
        T0,
      );
      await s.articles.insert([article('Operator note without source')], T0 + 1);
      const json = (await s.articles.listJson({ afterMs: 0, limit: 10 }, false)).map((j) => JSON.parse(j));
      expect(json.map((a) => [a.source, a.url])).toEqual([
        [null, null],
        ['wire-a', 'https://a.example/copper'],
      ]);
      expect(Object.keys(json[0]!)).toEqual([
        'id',
        'content',
        'urgency',
        'sentiment',
        'published_at',
        'received_at',
        'source',
        'url',
      ]);
      const full = (await s.articles.listJson({ afterMs: 0, limit: 10 }, true)).map((j) => JSON.parse(j));
      expect(Object.keys(full[0]!)).toEqual([
        'id',
        'content',
        'urgency',
        'sentiment',
        'published_at',
        'received_at',
        'source',
        'url',
        'tickers',
      ]);
      const feed = await s.articles.feedAfter(0, 10);
      expect(feed.map((e) => e.article.source)).toEqual(['wire-a', null]);
    },
  );

  test(
    'identity',
    'the identity migration backfills source and url from the carriers and hides what is no source name or link',
    async () => {
      const s = await open();
      const [a, b, c] = await s.articles.insert(
        [
          article('Carried story stored before identity'),
          article('Operator line with free text', { source: 'Reuters Markets desk', url: 'see the website' }),
          article('Plain line'),
        ],
        T0,
      );
      await h.rewindIdentity(s);
      // As the carriers and seen records were kept before: the first carrier's item under its canonical link, a later
      // carrier.
      await h.exec(
        s,
        `INSERT INTO article_carriers (article_id, source, url, at) VALUES ('${a!.id}', 'wire-a', 'https://a.example/story?utm_source=rss', ${T0}), ('${a!.id}', 'wire-b', 'https://b.example/x', ${T0 + 1000});
       INSERT INTO seen_items (source, external_id, canonical_url, article_id, seen_at) VALUES ('wire-a', 'g-1', 'https://a.example/story', '${a!.id}', ${T0})`,
      );
      const migrated = await peer(s);
      const byId = new Map((await migrated.articles.getMany([a!.id, b!.id, c!.id])).map((x) => [x.id, x]));
      expect(byId.get(a!.id)).toMatchObject({ source: 'wire-a', url: 'https://a.example/story' });
      expect(byId.get(b!.id)).toMatchObject({ source: null, url: null });
      expect(byId.get(c!.id)).toMatchObject({ source: null, url: null });
      expect((await migrated.sources.carriersOf(a!.id)).map((x) => x.reason)).toEqual([null, 'near-duplicate']);
    },
  );

  // ---- prune ----

  test('prune', 'dedup records not seen for the retention are dropped (counted); newer ones stay', async () => {
    const s = await open();
    await s.sources.ingestItems([item('w', 'old', 'Old story', 'https://ex.com/old')], T0);
    await s.sources.ingestItems([item('w', 'new', 'New story', 'https://ex.com/new')], T0 + 20 * DAY);
    expect(await s.sources.pruneSeen(30 * DAY, T0 + 30 * DAY - 1)).toBe(0);
    expect(await s.sources.pruneSeen(30 * DAY, T0 + 31 * DAY)).toBe(1);
    // The pruned one is new again (by id and URL); the kept one is still a duplicate.
    expect(
      (await s.sources.ingestItems([item('w', 'old', 'Old story', 'https://ex.com/old')], T0 + 31 * DAY))[0]!.status,
    ).toBe('stored');
    expect(
      (await s.sources.ingestItems([item('w', 'new', 'New story', 'https://ex.com/new')], T0 + 31 * DAY))[0],
    ).toMatchObject({ status: 'duplicate', reason: 'same-item' });
  });

  test('prune', 'seeing an item again keeps its record: retention counts from the last sighting', async () => {
    const s = await open();
    await s.sources.ingestItems([item('w', 'kept', 'Kept story')], T0);
    await s.sources.ingestItems([item('w', 'kept', 'Kept story')], T0 + 25 * DAY);
    expect(await s.sources.pruneSeen(30 * DAY, T0 + 40 * DAY)).toBe(0);
    expect((await s.sources.ingestItems([item('w', 'kept', 'Kept story')], T0 + 40 * DAY))[0]!.status).toBe(
      'duplicate',
    );
  });

  // ---- the event loop ----

  test(
    'event loop',
    `a large ingest is stored in slices of ${INGEST_SLICE_ITEMS} items, with a turn of the event loop between them`,
    async () => {
      // A rule that holds the thread a moment per comparison: each item is compared with 4 stored look-alikes.
      let turn = () => 0;
      const turnsOfComparisons = new Set<number>();
      const costly: NearDuplicateRule = {
        windowMs: DAY,
        isNearDuplicate: () => {
          const until = performance.now() + 0.2;
          while (performance.now() < until);
          turnsOfComparisons.add(turn());
          return false;
        },
      };
      const s = opened.track(await h.open(costly));
      await s.sources.ingestItems(
        [0, 1, 2, 3].map((i) => item('wire-a', `a-${i}`, `Acme story ${i}`)),
        T0,
      );
      const counter = turnCounter();
      turn = counter.turns;
      const outcomes = await s.sources.ingestItems(
        Array.from({ length: 2 * INGEST_SLICE_ITEMS }, (_, i) => item('wire-b', `b-${i}`, `Acme other ${i}`)),
        T0 + 1000,
      );
      counter.stop();
      expect(outcomes.every((o) => o.status === 'stored')).toBe(true);
      // Two slices: the comparisons ran in two turns of the event loop (one transaction: one).
      expect(turnsOfComparisons.size).toBeGreaterThanOrEqual(2);
    },
  );

  for (const [group, tests] of groups)
    registerStoreTests(`sources (${name}): ${group}`, tests, h, () => opened.closeAll());
  return count;
}

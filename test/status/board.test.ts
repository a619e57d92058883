/**
 * The status board of one instance (src/status/board.ts): what it serves when its store fails. A
 * database failure (connection, login, resource) is an outage at once, keeping what the last report
 * said of the sources; a lock another process holds a moment (SQLite's SQLITE_BUSY) keeps the last report.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/domain/log.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { StatusBoard, type StatusReport } from '../../src/status/index.js';
import type { StatusStore } from '../../src/store/ports/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

let store: SqliteStore;
let board: StatusBoard;
let failure: Error | undefined;
/** What this instance's health says of its database (red for a few seconds after a failed call). */
let databaseFailing = false;
let now = Date.parse('2026-11-27T12:00:00Z');

beforeEach(async () => {
  store = new SqliteStore(':memory:');
  await store.sources.add(
    { name: 'harbor-wire', url: 'https://feeds.example/h', everyMs: 30_000, urgency: 'auto' },
    now,
  );
  failure = undefined;
  databaseFailing = false;
  // The store's status port, failing with `failure` while it is set.
  const status = new Proxy(store.status, {
    get: (t, prop) => {
      const v = Reflect.get(t, prop, t);
      if (typeof v !== 'function') return v;
      return (...a: unknown[]) => (failure ? Promise.reject(failure) : v.apply(t, a));
    },
  }) as StatusStore;
  board = new StatusBoard({
    status,
    sources: store.sources,
    metrics: createMetrics({ defaultMetrics: false }),
    instanceState: async () => ({ seq: 0, databaseFailing, indexLoading: false }),
    clock: () => now,
    log: silentLog,
    tickMs: 3_600_000,
  });
  await board.start();
});

afterEach(async () => {
  await board.stop();
  await store.close();
});

const served = () => JSON.parse(board.json()) as StatusReport;

describe('a board whose store fails', () => {
  it('serves an outage at once when the database fails, with the last sources it read', async () => {
    expect(served().state).toBe('operational');
    failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    now += 6_000;
    await board.tick();
    const report = served();
    expect(report.state).toBe('outage');
    expect(report.components.every((c) => c.cause === 'database_unavailable')).toBe(true);
    expect(report.sources.map((s) => s.name)).toEqual(['harbor-wire']);
    expect(report.generated_at).toBe(new Date(now).toISOString());
    expect(board.json()).not.toContain('ECONNREFUSED');
  });

  it('keeps the last report while another process holds the lock a moment, and refreshes after', async () => {
    const before = board.json();
    failure = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    now += 6_000;
    await board.tick();
    expect(board.json()).toBe(before);
    failure = undefined;
    await board.tick();
    expect(served().generated_at).toBe(new Date(now).toISOString());
    expect(served().state).toBe('operational');
  });
});

describe('a database outage in the incident history', () => {
  it('opens an incident per component from when the outage was first seen, search included, ended once it is over', async () => {
    failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    now += 6_000;
    const firstSeen = now;
    await board.tick();
    now += 20_000;
    await board.tick();
    // Back: the first sample still says the database failed a moment ago (the health's red window).
    failure = undefined;
    databaseFailing = true;
    now += 6_000;
    await board.tick();
    databaseFailing = false;
    now += 6_000;
    await board.tick();
    const outage = (await store.status.incidents(0)).filter((i) => i.cause === 'database_unavailable');
    expect(outage.map((i) => i.component).sort()).toEqual(['rest', 'search', 'stream', 'webhooks']);
    for (const i of outage) expect(i).toMatchObject({ startedAt: firstSeen, endedAt: now });
    expect(served().state).toBe('operational');
  });
});

describe('two instances share one report', () => {
  it('only the instance that claims the turn builds it (and opens or closes incidents); both serve it', async () => {
    const builds = { a: 0, b: 0 };
    const boardOf = (name: 'a' | 'b') =>
      new StatusBoard({
        status: store.status,
        sources: { list: () => (builds[name]++, store.sources.list()) },
        metrics: createMetrics({ defaultMetrics: false }),
        instanceState: async () => ({ seq: 0, databaseFailing: false, indexLoading: false }),
        clock: () => now,
        log: silentLog,
        tickMs: 3_600_000,
      });
    const [a, b] = [boardOf('a'), boardOf('b')];
    try {
      now += 6_000;
      await Promise.all([a.tick(), b.tick()]);
      expect(builds.a + builds.b).toBe(1);
      // The one that lost the claim serves the new report from its next turn (a second later).
      await Promise.all([a.tick(), b.tick()]);
      expect(builds.a + builds.b).toBe(1);
      expect(a.json()).toBe(b.json());
      expect(JSON.parse(a.json()).generated_at).toBe(new Date(now).toISOString());
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe('incidents the board opens', () => {
  it('opens one for a failed poll from its first failure, none for a poll only overdue', async () => {
    const lease = await store.sources.claimDue('poller', now, 60_000, 10);
    expect(lease).toHaveLength(1);
    await store.sources.recordPoll('harbor-wire', 'poller', {
      at: now,
      status: null,
      error: 'timeout: no answer',
      etag: null,
      lastModified: null,
      nextPollAt: now + 1_000,
      failures: 1,
      minIntervalMs: null,
      seen: 0,
      ingested: 0,
      deduplicated: 0,
    });
    await store.sources.add(
      { name: 'summit-wire', url: 'https://feeds.example/s', everyMs: 30_000, urgency: 'auto' },
      now,
    );
    const failedAt = now;
    now += 6_000;
    await board.tick();
    const failing = served().incidents.filter((i) => i.component === 'source:harbor-wire');
    expect(failing).toEqual([
      expect.objectContaining({
        cause: 'source_unreachable',
        started_at: new Date(failedAt).toISOString(),
        ended_at: null,
      }),
    ]);
    // summit-wire has never been polled and the board started long ago: overdue once its poll time is 10 s past.
    await store.sources.claimDue('poller', now, 60_000, 10);
    await store.sources.recordPoll('summit-wire', 'poller', {
      at: now,
      status: 200,
      error: null,
      etag: null,
      lastModified: null,
      nextPollAt: now,
      failures: 0,
      minIntervalMs: null,
      seen: 0,
      ingested: 0,
      deduplicated: 0,
    });
    now += 20_000;
    await board.tick();
    const report = served();
    expect(report.sources.find((s) => s.name === 'summit-wire')).toMatchObject({
      state: 'degraded',
      cause: 'source_overdue',
    });
    expect(report.incidents.some((i) => i.component === 'source:summit-wire')).toBe(false);
  });
});

describe('one bad stored sample', () => {
  it('is left out: the report is built from the others', async () => {
    await store.status.putSample('another-version', Math.floor(now / 60_000), '{"rest":"not buckets"}');
    now += 6_000;
    await board.tick();
    expect(served().generated_at).toBe(new Date(now).toISOString());
    expect(served().state).toBe('operational');
  });
});

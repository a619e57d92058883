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
let now = Date.parse('2026-11-27T12:00:00Z');

beforeEach(async () => {
  store = new SqliteStore(':memory:');
  await store.sources.add(
    { name: 'harbor-wire', url: 'https://feeds.example/h', everyMs: 30_000, urgency: 'auto' },
    now,
  );
  failure = undefined;
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
    instanceState: async () => ({ seq: 0, databaseFailing: false, indexLoading: false }),
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

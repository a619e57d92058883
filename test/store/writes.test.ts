/**
 * What the store writes: stamped at commit, in one order across processes, conforming to
 * the contract, owner-only on disk, and never making the service wait on another process's lock.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { articleRules } from '../../src/contract/index.js';
import { parseArticle } from '../../src/ingest/parse.js';
import { EmbeddingWorker } from '../../src/indexing/index.js';
import { SERVICE_BUSY_TIMEOUT_MS } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { repoRoot } from '../support/specs.js';
import { TrigramEmbedder } from '../support/service.js';
import { recordLog } from '../support/log.js';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'fns-writes-'));
  dirs.push(d);
  return d;
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const article = (content: string, tickers: { ticker: string; sentiment: 'neutral' }[] = []) => ({
  content,
  urgency: 'regular' as const,
  sentiment: null,
  published_at: null,
  tickers,
});

describe('received_at and id are taken inside the write transaction', () => {
  it('reads the clock only once the transaction holds the write lock', async () => {
    const store = new SqliteStore(join(dir(), 'fns.sqlite'));
    const seen: boolean[] = [];
    await store.articles.insert([article('a'), article('b')], () => {
      seen.push(store.db.inTransaction);
      return Date.parse('2026-11-21T12:00:00Z');
    });
    expect(seen).toEqual([true]);
    store.close();
  });

  it('orders by id, by received_at and by commit alike across processes, even when a clock was read early', async () => {
    const f = join(dir(), 'fns.sqlite');
    const late = new SqliteStore(f);
    const early = new SqliteStore(f);
    const t = Date.parse('2026-11-21T12:00:00Z');
    // Commits first, with the later time; the other process's clock says earlier (read before it got the lock).
    const [first] = await late.articles.insert([article('committed first')], () => t + 8600);
    const second = await early.articles.insert([article('committed second'), article('and third')], () => t);
    for (const a of second) {
      expect(a.id > first!.id).toBe(true);
      expect(Date.parse(a.received_at)).toBeGreaterThanOrEqual(Date.parse(first!.received_at));
    }
    const feed = await late.articles.feedAfter(0, 10);
    const byCommit = feed.map((e) => e.article.id);
    expect(byCommit).toEqual([...byCommit].sort());
    expect(feed.map((e) => e.article.received_at)).toEqual([...feed.map((e) => e.article.received_at)].sort());
    // A polling client with since = the newest received_at it saw before the second commit sees it.
    const page = await late.articles.list({ afterMs: Date.parse(first!.received_at) - 1, limit: 10 });
    expect(page.map((a) => a.content)).toContain('committed second');
    late.close();
    early.close();
  });
});

describe('what is stored and served obeys the contract, whatever the derivation yields', () => {
  const manyCashtags = Array.from(
    { length: 150 },
    (_, i) => `$T${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26))}`,
  ).join(' ');

  it('caps derived tickers at the contract maxItems when a line is read', () => {
    const r = parseArticle({ content: `Movers: ${manyCashtags}` });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.article.tickers).toHaveLength(articleRules.tickersMaxItems);
  });

  it('caps tickers in the store too, and drops invalid or repeated symbols', async () => {
    const store = new SqliteStore(':memory:');
    const tickers = Array.from({ length: 150 }, (_, i) => ({ ticker: `S${i}`, sentiment: 'neutral' as const }));
    const [stored] = await store.articles.insert(
      [
        article('x', [
          { ticker: 'not a symbol', sentiment: 'neutral' },
          { ticker: 'S0', sentiment: 'neutral' },
          ...tickers,
        ]),
      ],
      Date.now(),
    );
    expect(stored!.tickers).toHaveLength(articleRules.tickersMaxItems);
    expect(stored!.tickers[0]).toEqual({ ticker: 'S0', sentiment: 'neutral', relevance: 1 });
    const [served] = await store.articles.listJson({ afterMs: 0, limit: 1 }, true);
    expect(JSON.parse(served!).tickers).toHaveLength(articleRules.tickersMaxItems);
    store.close();
  });

  it('refuses content longer than the contract allows instead of storing it', async () => {
    const store = new SqliteStore(':memory:');
    await expect(
      store.articles.insert([article('x'.repeat(articleRules.contentMaxLength + 1))], Date.now()),
    ).rejects.toThrow(/longer than/);
    expect(await store.articles.count()).toBe(0);
    store.close();
  });
});

describe('secrets at rest: the data directory and database files are owner-only', () => {
  it('creates the directory 0700 and the database, WAL and shared-memory files 0600', async () => {
    const data = join(dir(), 'nested', 'data');
    const store = new SqliteStore(join(data, 'fns.sqlite'));
    await store.articles.insert([article('x')], Date.now());
    expect(statSync(data).mode & 0o777).toBe(0o700);
    for (const f of ['fns.sqlite', 'fns.sqlite-wal', 'fns.sqlite-shm'])
      expect(statSync(join(data, f)).mode & 0o777, f).toBe(0o600);
    store.close();
  });
});

/** Another process that takes the write lock, says "locked", holds it for `ms`, then says "released". */
function holdWriteLock(file: string, ms: number): Promise<{ released: Promise<number> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); process.stdout.write('released\\n'); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let releasedAt: (t: number) => void;
    const released = new Promise<number>((r) => (releasedAt = r));
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('released')) releasedAt(Date.now());
      else if (out.includes('locked')) resolve({ released });
    });
    child.on('error', reject);
  });
}

describe('the service never waits on a lock held by another process', () => {
  it('the embedding worker leaves the lock alone and stores the vectors once it is free', async () => {
    const f = join(dir(), 'fns.sqlite');
    const cli = new SqliteStore(f);
    await cli.articles.insert([article('Fed raises rates'), article('Oil prices jump')], Date.now());
    cli.close();
    const store = new SqliteStore(f, { busyTimeoutMs: SERVICE_BUSY_TIMEOUT_MS });
    const logs: string[] = [];
    const worker = new EmbeddingWorker(store.vectors, new TrigramEmbedder(), { idleMs: 20, log: recordLog(logs) });
    const lock = await holdWriteLock(f, 1500);
    // While the lock is held the worker's write fails at once (SQLITE_BUSY) instead of blocking the loop.
    await expect(worker.runOnce()).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
    // Timers keep firing while the lock is held: the event loop is free.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    await worker.start();
    const releasedAt = await lock.released;
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(10);
    expect(await store.vectors.queueLength()).toBe(2);
    // Once released, the vectors computed earlier are stored by the background retries.
    await until(
      async () => (await store.vectors.queueLength()) === 0,
      'the vectors stored by the background retries',
      5000,
      25,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(releasedAt);
    expect(logs.filter((l) => /failed/.test(l))).toEqual([]);
    await worker.stop();
    store.close();
  });
});

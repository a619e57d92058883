/**
 * What only the PostgreSQL store has to prove: seq = commit order across pools (a feed reader never
 * skips), the LISTEN/NOTIFY bus and its reconnect, migrations racing, lock waits that end as "busy",
 * unreachable / lost connections as "unavailable" and recovery without a restart, and Article JSON
 * byte-identical to the SQLite store's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EmbeddingWorker, SemanticIndex } from '../../src/indexing/index.js';
import { isStoreBusy, isStoreUnavailable } from '../../src/store/ports/errors.js';
import { LOCK } from '../../src/store/postgres/db.js';
import {
  LATEST_VERSION,
  listenFeed,
  migrate,
  openPostgresStore,
  type PostgresStore,
} from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import {
  adminClient,
  dropSchemas,
  freshSchema,
  PG_TEST_URL,
  pgReachable,
  reportUnreachable,
  sql,
} from '../support/postgres.js';
import { TrigramEmbedder } from '../support/service.js';
import { article } from './ports.suite.js';
import { until } from '../support/wait.js';

const reachable = await pgReachable();
const schemas: string[] = [];
const stores: PostgresStore[] = [];
const closers: (() => Promise<void>)[] = [];
let registered = 0;
const test = (title: string, fn: () => Promise<void>, timeout?: number) => {
  registered++;
  (reachable ? it : it.skip)(title, fn, timeout);
};

async function open(
  schema = newSchema(),
  options: Parameters<typeof openPostgresStore>[1] = {},
): Promise<PostgresStore> {
  const s = await openPostgresStore(PG_TEST_URL, { schema, poolSize: 4, ...options });
  stores.push(s);
  return s;
}
function newSchema(): string {
  const s = freshSchema();
  schemas.push(s);
  return s;
}
describe('postgres store engine', () => {
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
    for (const s of stores.splice(0)) await s.close();
  });
  afterAll(async () => {
    if (reachable) await dropSchemas(schemas);
  });

  test('concurrent writers on two pools: seq order is commit order, and a feed reader running meanwhile misses nothing', async () => {
    const schema = newSchema();
    const a = await open(schema, { poolSize: 6 });
    const b = await open(schema, { poolSize: 6 });
    const seen: string[] = [];
    let cursor = 0;
    let writing = true;
    const reader = (async () => {
      for (;;) {
        const done = !writing;
        const page = await a.articles.feedAfter(cursor, 500);
        for (const e of page) {
          expect(e.seq).toBeGreaterThan(cursor);
          cursor = e.seq;
          seen.push(e.article.id);
        }
        if (done && page.length === 0) return;
      }
    })();
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++)
      writes.push((i % 2 ? a : b).articles.insert([article(`w${i}-1`), article(`w${i}-2`)], Date.now));
    const inserted = (await Promise.all(writes)).flat() as { id: string }[];
    writing = false;
    await reader;
    expect(seen).toHaveLength(120);
    expect(new Set(seen)).toEqual(new Set(inserted.map((x) => x.id)));
    expect(seen).toEqual([...seen].sort()); // id order = seq order
    const feed = await b.articles.feedAfter(0, 500);
    expect(feed.map((e) => e.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
  });

  test('feed bus: a commit from another pool is notified; after the listener connection is killed it reconnects and says so', async () => {
    const schema = newSchema();
    const writer = await open(schema);
    const seqs: number[] = [];
    let reconnects = 0;
    const stop = await listenFeed(PG_TEST_URL, schema, {
      onSeq: (s) => seqs.push(s),
      onReconnect: () => reconnects++,
      minBackoffMs: 20,
    });
    closers.push(stop);
    await writer.articles.insert([article('one'), article('two')], Date.now);
    await until(() => seqs.length > 0, 'first notification');
    expect(seqs).toEqual([2]);

    const killed = await sql<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'fns feed listener' AND query = $1`,
      [`LISTEN fns_feed_${schema}`],
    );
    expect(killed).toEqual([{ ok: true }]);
    await until(() => reconnects === 1, 'reconnect');
    // The consumer re-reads from its cursor; what follows is notified again.
    await writer.articles.insert([article('three')], Date.now);
    await until(() => seqs.includes(3), 'notification after reconnect');
    expect(reconnects).toBe(1);
    // A transaction rolled back notifies nothing; a different schema's channel is not heard.
    await expect(
      writer.transaction(async (tx) => {
        await tx.articles.insert([article('x')], Date.now);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    const other = await open();
    await other.articles.insert([article('elsewhere')], Date.now);
    await writer.articles.insert([article('four')], Date.now);
    await until(() => seqs.includes(4), 'fourth');
    expect(seqs).toEqual([2, 3, 4]);
  });

  test('migrations: instances starting together apply each version once; a current schema is left alone', async () => {
    const schema = newSchema();
    const results = await Promise.all([
      migrate(PG_TEST_URL, schema),
      migrate(PG_TEST_URL, schema),
      migrate(PG_TEST_URL, schema),
    ]);
    expect(results.flat().sort()).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => i + 1));
    expect(await migrate(PG_TEST_URL, schema)).toEqual([]);
    const rows = await sql<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
    expect(rows.map((r) => r.version)).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => i + 1));
    const s = await open(schema, { migrate: false });
    expect(await s.migrationStatus()).toEqual({ applied: LATEST_VERSION, latest: LATEST_VERSION });
    await expect(openPostgresStore(PG_TEST_URL, { schema: newSchema(), migrate: false })).rejects.toThrow(
      /fns migrate/,
    );
  });

  test('an insert waiting for another writer longer than lock_timeout fails as busy, never hangs; a stuck statement as unavailable', async () => {
    const schema = newSchema();
    const s = await open(schema, { lockTimeoutMs: 200 });
    const holder = adminClient();
    await holder.connect();
    closers.push(() => holder.end());
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK.articles, schema]);
    const t = Date.now();
    const busy = await s.articles.insert([article('waits')], Date.now).catch((e: unknown) => e);
    expect(isStoreBusy(busy)).toBe(true);
    expect(isStoreUnavailable(busy)).toBe(false);
    expect(Date.now() - t).toBeLessThan(2000);

    const slow = await open(schema, { lockTimeoutMs: 0, statementTimeoutMs: 300 });
    const timedOut = await slow.articles.insert([article('waits')], Date.now).catch((e: unknown) => e);
    expect(isStoreUnavailable(timedOut)).toBe(true);
    await holder.query('ROLLBACK');
    expect(await slow.articles.insert([article('now')], Date.now)).toHaveLength(1);
    expect(await s.articles.count()).toBe(1);
  });

  test('unreachable PostgreSQL: open fails fast as unavailable', async () => {
    const t = Date.now();
    const err = await openPostgresStore('postgres://127.0.0.1:1/test', {
      schema: 'public',
      connectTimeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(isStoreUnavailable(err)).toBe(true);
    expect(Date.now() - t).toBeLessThan(3000);
    expect(isStoreUnavailable(new Error('syntax error'))).toBe(false);
  });

  test('connections killed under the pool: calls fail as unavailable (never a hang), then the pool recovers by itself', async () => {
    const schema = newSchema();
    const s = await open(schema, { applicationName: `fns test ${schema}` });
    await Promise.all([s.articles.count(), s.articles.count(), s.articles.count()]); // several pooled connections
    // Inside a transaction when its connection dies.
    const failed = s.transaction(async (tx) => {
      await tx.accounts.createAccount('pro', Date.now(), 'acct_lost');
      await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [
        `fns test ${schema}`,
      ]);
      await tx.accounts.getAccount('acct_lost');
    });
    const err = await failed.catch((e: unknown) => e);
    expect(isStoreUnavailable(err)).toBe(true);
    // Each call until one answers; the ones the dead connections take fail as unavailable.
    const errors: unknown[] = [];
    const answers = async () => {
      try {
        await s.ping();
        return true;
      } catch (e) {
        errors.push(e);
        return false;
      }
    };
    await until(answers, 'the pool to answer again', 10_000, 50);
    expect(errors.every(isStoreUnavailable)).toBe(true);
    expect(await s.accounts.getAccount('acct_lost')).toBeUndefined();
    expect(await s.accounts.createAccount('pro', Date.now(), 'acct_after')).toMatchObject({ id: 'acct_after' });
    expect(s.poolStats().total).toBeGreaterThan(0);
  });

  test('listJson text is byte-identical to the SQLite store for the same rows', async () => {
    const s = await open();
    const dir = mkdtempSync(join(tmpdir(), 'fns-pg-json-'));
    const lite = new SqliteStore(join(dir, 'fns.sqlite'));
    try {
      const rows = [
        article('Plain', {
          urgency: 'flash',
          sentiment: 'dovish',
          published_at: '2026-11-21T11:00:00+00:00',
          tickers: [{ ticker: 'BRK.B', sentiment: 'negative' }],
        }),
        article('Quotes " and \\ backslash / slash\r\n\b\f\u0007\u001f\u007f \u2028 \u2029 é 中文 😀', {
          tickers: [
            { ticker: 'SPY', sentiment: 'neutral' },
            { ticker: 'QQQ', sentiment: 'positive' },
          ],
        }),
      ];
      const at = Date.parse('2026-11-21T12:00:00.123Z');
      const [p, l] = [await s.articles.insert(rows, at), await lite.articles.insert(rows, at)];
      for (const withTickers of [true, false]) {
        const pj = await s.articles.listJson({ afterMs: 0, limit: 10 }, withTickers);
        const lj = await lite.articles.listJson({ afterMs: 0, limit: 10 }, withTickers);
        // Same rows but different random ids: compare with the ids swapped in.
        const swapped = lj.map((j, i) => j.replace(l[l.length - 1 - i]!.id, p[p.length - 1 - i]!.id));
        expect(pj).toEqual(swapped);
      }
    } finally {
      await lite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the embedding queue shared by two pools hands each article to one worker', async () => {
    const schema = newSchema();
    const a = await open(schema);
    const b = await open(schema);
    await a.articles.insert(
      Array.from({ length: 40 }, (_, i) => article(`q${i}`)),
      Date.now(),
    );
    const taken: string[] = [];
    const work = async (s: PostgresStore) => {
      for (let batch = await s.vectors.nextBatch(3); batch.length > 0; batch = await s.vectors.nextBatch(3)) {
        taken.push(...batch.map((x) => x.id));
        await s.vectors.storeVectors(
          'm',
          batch.map((x) => ({ id: x.id, vector: Float32Array.from([1]) })),
        );
      }
    };
    await Promise.all([work(a), work(b), work(a), work(b)]);
    expect(taken).toHaveLength(40);
    expect(new Set(taken).size).toBe(40);
    expect(await a.vectors.queueLength()).toBe(0);
    const vectors = await b.vectors.vectorsAfter('m', 0);
    expect(vectors.map((v) => v.rowid)).toEqual([...vectors.map((v) => v.rowid)].sort((x, y) => x - y));
    expect(new Set(vectors.map((v) => v.id)).size).toBe(40);
  });

  test("two instances' embedding workers embed each article once; every instance's index finds them", async () => {
    const schema = newSchema();
    const a = await open(schema);
    const b = await open(schema);
    await a.articles.insert(
      [
        ...Array.from({ length: 30 }, (_, i) => article(`filler story ${i}`)),
        article('Crude oil prices jump on supply cut'),
      ],
      Date.now(),
    );
    const embedded: string[] = [];
    const counting = () => {
      const e = new TrigramEmbedder();
      const embed = e.embed.bind(e);
      e.embed = async (texts) => {
        embedded.push(...texts);
        return embed(texts);
      };
      return e;
    };
    const [na, nb] = await Promise.all([
      new EmbeddingWorker(a.vectors, counting(), { batchSize: 4, leaseMs: 30_000 }).drain(),
      new EmbeddingWorker(b.vectors, counting(), { batchSize: 4 }).drain(),
    ]);
    expect(na + nb).toBe(31);
    expect(embedded).toHaveLength(31);
    expect(new Set(embedded).size).toBe(31);
    const hits = await new SemanticIndex(b, new TrigramEmbedder()).search('oil prices', 1);
    expect(hits.map((h) => h.content)).toEqual(['Crude oil prices jump on supply cut']);
  });
});

reportUnreachable(reachable, registered);

/**
 * `tsx scripts/bench-pg-driver.ts [url]`: `pg` (node-postgres) vs `postgres` (porsager) on this machine,
 * on the store's own query shapes, against a throw-away schema (dropped at the end):
 *   - findKey: a keyed lookup on a unique index (sequential, and 16 in flight on a pool of 10);
 *   - listJson: the GET /v1/news query, 50 rows of Article JSON built by the database;
 *   - insert: a 1,000-row insert transaction (row by row, and one INSERT … SELECT FROM unnest());
 *   - vectors: reading 5,000 384-dim vectors stored as bytea vs real[] (node-postgres).
 * Several rounds each; the median is printed. PG_BENCH_URL or the first argument selects the server.
 */
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';
import postgres from 'postgres';

const url = process.argv[2] ?? process.env.PG_BENCH_URL ?? 'postgres://127.0.0.1:5432/test';
const schema = `fns_bench_${randomBytes(4).toString('hex')}`;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const LOOKUPS = 2000;
const LISTS = 500;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const JSON_SQL = `SELECT json_build_object('id', id, 'content', content, 'urgency', urgency, 'sentiment', sentiment,
  'published_at', published_at, 'received_at', received_at, 'tickers', tickers::json)::text AS j
  FROM ${schema}.articles WHERE id > $1 ORDER BY id DESC LIMIT 50`;
const KEY_SQL = `SELECT id, account_id, active FROM ${schema}.api_keys WHERE key_hash = $1`;
const ROW_SQL = `INSERT INTO ${schema}.articles (id, content, urgency, sentiment, published_at, received_at, tickers) VALUES ($1, $2, $3, $4, $5, $6, $7)`;
const UNNEST_SQL = `INSERT INTO ${schema}.articles (id, content, urgency, sentiment, published_at, received_at, tickers)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])`;

let serial = 0;
function rows(n: number): string[][] {
  return Array.from({ length: n }, () => {
    const id = `B${String(++serial).padStart(25, '0')}`;
    return [
      id,
      `Fed holds rates steady as inflation cools, article ${serial} `.repeat(4),
      'regular',
      'neutral',
      null as unknown as string,
      new Date().toISOString(),
      '[{"ticker":"SPY","sentiment":"neutral"}]',
    ];
  });
}
const columns = (rs: string[][]) => [0, 1, 2, 3, 4, 5, 6].map((i) => rs.map((r) => r[i]!));

async function main(): Promise<void> {
  // libpq's default user is the OS user; node-postgres reads $USER, which may be unset.
  const withUser = new URL(url);
  if (!withUser.username) withUser.username = userInfo().username;
  const pool = new pg.Pool({ connectionString: withUser.href, max: 10 });
  const sql = postgres(url, { max: 10, onnotice: () => {} });
  await pool.query(`CREATE SCHEMA ${schema}`);
  try {
    await pool.query(
      `CREATE TABLE ${schema}.api_keys (id text PRIMARY KEY, account_id text NOT NULL, key_hash text UNIQUE NOT NULL, active boolean NOT NULL)`,
    );
    await pool.query(`CREATE TABLE ${schema}.articles (seq bigserial PRIMARY KEY, id text UNIQUE NOT NULL, content text NOT NULL, urgency text NOT NULL,
      sentiment text, published_at text, received_at text NOT NULL, tickers text NOT NULL)`);
    const hashes = Array.from({ length: 10_000 }, (_, i) => `h${i}`);
    await pool.query(
      `INSERT INTO ${schema}.api_keys SELECT 'k'||i, 'a'||i, 'h'||i, true FROM generate_series(0, 9999) i`,
    );
    await pool.query(UNNEST_SQL, columns(rows(20_000)));
    await pool.query(`ANALYZE ${schema}.articles; ANALYZE ${schema}.api_keys`);
    const pick = () => hashes[Math.floor(Math.random() * hashes.length)]!;

    const results: Record<string, { pg: number[]; postgres: number[] }> = {};
    const record = (name: string, driver: 'pg' | 'postgres', ms: number) =>
      (results[name] ??= { pg: [], postgres: [] })[driver].push(ms);
    const inFlight = async (n: number, total: number, one: () => Promise<unknown>) => {
      let left = total;
      await Promise.all(
        Array.from({ length: n }, async () => {
          while (left-- > 0) await one();
        }),
      );
    };

    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which driver goes first, so warm caches favour neither.
      const order: ('pg' | 'postgres')[] = round % 2 ? ['pg', 'postgres'] : ['postgres', 'pg'];
      for (const d of order) {
        const findKey =
          d === 'pg'
            ? () => pool.query({ name: 'fk', text: KEY_SQL, values: [pick()] })
            : () => sql.unsafe(KEY_SQL, [pick()], { prepare: true });
        const listJson =
          d === 'pg'
            ? () => pool.query({ name: 'lj', text: JSON_SQL, values: ['0'] })
            : () => sql.unsafe(JSON_SQL, ['0'], { prepare: true });
        record(
          'findKey x2000 sequential (ms)',
          d,
          await time(async () => {
            for (let i = 0; i < LOOKUPS; i++) await findKey();
          }),
        );
        record('findKey x2000, 16 in flight (ms)', d, await time(() => inFlight(16, LOOKUPS, findKey)));
        record(
          'listJson 50 rows x500 sequential (ms)',
          d,
          await time(async () => {
            for (let i = 0; i < LISTS; i++) await listJson();
          }),
        );
        record('listJson 50 rows x500, 16 in flight (ms)', d, await time(() => inFlight(16, LISTS, listJson)));
        const batch = rows(1000);
        if (d === 'pg') {
          record(
            'insert 1,000 rows one by one, 1 tx (ms)',
            d,
            await time(async () => {
              const c = await pool.connect();
              try {
                await c.query('BEGIN');
                for (const r of batch) await c.query({ name: 'ins', text: ROW_SQL, values: r });
                await c.query('COMMIT');
              } finally {
                c.release();
              }
            }),
          );
          const b2 = rows(1000);
          record(
            'insert 1,000 rows via unnest, 1 tx (ms)',
            d,
            await time(async () => {
              const c = await pool.connect();
              try {
                await c.query('BEGIN');
                await c.query(UNNEST_SQL, columns(b2));
                await c.query('COMMIT');
              } finally {
                c.release();
              }
            }),
          );
        } else {
          // porsager pipelines the statements of a transaction.
          record(
            'insert 1,000 rows one by one, 1 tx (ms)',
            d,
            await time(() => sql.begin((tx) => batch.map((r) => tx.unsafe(ROW_SQL, r, { prepare: true })))),
          );
          const b2 = rows(1000);
          record(
            'insert 1,000 rows via unnest, 1 tx (ms)',
            d,
            await time(() => sql.begin((tx) => tx.unsafe(UNNEST_SQL, columns(b2) as never))),
          );
        }
      }
    }

    // Vector storage: bytea vs real[] for the in-memory index's load (node-postgres).
    const DIM = 384,
      N = 5000;
    await pool.query(`CREATE TABLE ${schema}.vb (rowid bigserial PRIMARY KEY, v bytea NOT NULL)`);
    await pool.query(`CREATE TABLE ${schema}.vr (rowid bigserial PRIMARY KEY, v real[] NOT NULL)`);
    const vecs = Array.from({ length: N }, () => Float32Array.from({ length: DIM }, () => Math.random() - 0.5));
    const vres: Record<string, number[]> = {
      'bytea write': [],
      'real[] write': [],
      'bytea read': [],
      'real[] read': [],
    };
    for (let round = 0; round < Math.max(3, Math.floor(ROUNDS / 2)); round++) {
      await pool.query(`TRUNCATE ${schema}.vb, ${schema}.vr`);
      vres['bytea write']!.push(
        await time(() =>
          pool.query(`INSERT INTO ${schema}.vb (v) SELECT * FROM unnest($1::bytea[])`, [
            vecs.map((v) => Buffer.from(v.buffer)),
          ]),
        ),
      );
      vres['real[] write']!.push(
        await time(() =>
          pool.query(
            `INSERT INTO ${schema}.vr (v) SELECT ARRAY(SELECT json_array_elements_text(x)::real) FROM json_array_elements($1::json) x`,
            [JSON.stringify(vecs.map((v) => Array.from(v)))],
          ),
        ),
      );
      vres['bytea read']!.push(
        await time(async () => {
          const r = await pool.query<{ v: Buffer }>(`SELECT rowid, v FROM ${schema}.vb ORDER BY rowid`);
          r.rows.map((x) => new Float32Array(new Uint8Array(x.v).buffer));
        }),
      );
      vres['real[] read']!.push(
        await time(async () => {
          const r = await pool.query<{ v: string[] | number[] }>(`SELECT rowid, v FROM ${schema}.vr ORDER BY rowid`);
          r.rows.map((x) => Float32Array.from(x.v as number[], Number));
        }),
      );
    }

    console.log(`PostgreSQL driver benchmark, ${ROUNDS} rounds, medians (${url}, Node ${process.version})`);
    console.log(`${'operation'.padEnd(44)} ${'pg 8.23.1'.padStart(12)} ${'postgres 3.4.9'.padStart(15)}`);
    for (const [name, r] of Object.entries(results)) {
      console.log(
        `${name.padEnd(44)} ${median(r.pg).toFixed(1).padStart(12)} ${median(r.postgres).toFixed(1).padStart(15)}`,
      );
    }
    console.log(`\nvectors, ${N} x ${DIM} float32, node-postgres, medians (ms)`);
    for (const [name, r] of Object.entries(vres))
      console.log(`${name.padEnd(44)} ${median(r).toFixed(1).padStart(12)}`);
    const size = await pool.query(
      `SELECT pg_total_relation_size('${schema}.vb') AS b, pg_total_relation_size('${schema}.vr') AS r`,
    );
    console.log(
      `${'table size bytea / real[] (MB)'.padEnd(44)} ${(size.rows[0].b / 1e6).toFixed(1).padStart(12)} ${(size.rows[0].r / 1e6).toFixed(1).padStart(15)}`,
    );
  } finally {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
    await sql.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

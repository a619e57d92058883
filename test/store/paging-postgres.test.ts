/** The store paging suite on PostgreSQL: a fresh schema per store, dropped afterwards. */
import { openPostgresStore, PostgresStore } from '../../src/store/postgres/index.js';
import { LATEST_VERSION } from '../../src/store/postgres/migrations.js';
import { describeStorePaging } from './paging.suite.js';
import { dropSchemas, freshSchema, PG_TEST_URL, pgReachable, reportUnreachable, sql } from '../support/postgres.js';

const reachable = await pgReachable();
const schemas: string[] = [];

const skipped = describeStorePaging('postgres', {
  leases: true,
  runs: 12,
  skip: !reachable,
  async open() {
    const schema = freshSchema();
    schemas.push(schema);
    return openPostgresStore(PG_TEST_URL, { schema, poolSize: 4 });
  },
  async peer(store) {
    return openPostgresStore(PG_TEST_URL, { schema: (store as PostgresStore).schema, poolSize: 4 });
  },
  async rewindTickerIndex(store) {
    const schema = (store as PostgresStore).schema;
    await sql(`DROP TABLE ${schema}.article_tickers`);
    await sql(`DELETE FROM ${schema}.schema_migrations WHERE version = $1`, [LATEST_VERSION]);
  },
  async reopen(store) {
    const schema = (store as PostgresStore).schema;
    await store.close();
    return openPostgresStore(PG_TEST_URL, { schema, poolSize: 4 });
  },
  async cleanup() {
    await dropSchemas(schemas.splice(0));
  },
});
reportUnreachable(reachable, skipped);

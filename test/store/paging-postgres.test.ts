/** The store paging suite on PostgreSQL: a fresh schema per store, dropped afterwards. */
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';

const tickerVersion = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE article_tickers')) + 1;
import { describeStorePaging } from './paging.suite.js';
import { PG_TEST_URL, pgReachable, pgTestStores, reportUnreachable, sql } from '../support/postgres.js';

const reachable = await pgReachable();
const stores = pgTestStores();

const skipped = describeStorePaging('postgres', {
  leases: true,
  runs: 12,
  skip: !reachable,
  open: () => stores.open(),
  peer: (store) => stores.peer(store),
  async rewindTickerIndex(store) {
    const schema = (store as PostgresStore).schema;
    await sql(`DROP TABLE ${schema}.article_tickers`);
    // From the ticker index's migration on (later ones are idempotent and run again).
    await sql(`DELETE FROM ${schema}.schema_migrations WHERE version >= $1`, [tickerVersion]);
  },
  async reopen(store) {
    const schema = (store as PostgresStore).schema;
    await store.close();
    return openPostgresStore(PG_TEST_URL, { schema, poolSize: 4 });
  },
  cleanup: () => stores.cleanup(),
});
reportUnreachable(reachable, skipped);

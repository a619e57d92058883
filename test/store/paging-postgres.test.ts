/** The store paging suite on PostgreSQL: a fresh schema per store, dropped afterwards. */
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
/** The ticker index's migration is version 3; the identity migration (4) follows it and is undone too. */
const TICKER_INDEX_VERSION = 3;
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
    await sql(`ALTER TABLE ${schema}.seen_items DROP COLUMN reason`);
    await sql(`ALTER TABLE ${schema}.article_carriers DROP COLUMN reason`);
    await sql(`DELETE FROM ${schema}.schema_migrations WHERE version >= $1`, [TICKER_INDEX_VERSION]);
  },
  async reopen(store) {
    const schema = (store as PostgresStore).schema;
    await store.close();
    return openPostgresStore(PG_TEST_URL, { schema, poolSize: 4 });
  },
  cleanup: () => stores.cleanup(),
});
reportUnreachable(reachable, skipped);

/** The SourceStore suite on PostgreSQL: a fresh schema per test (dropped afterwards); a peer is a second pool on it. */
import type { NearDuplicateRule, Store } from '../../src/store/ports/index.js';
import { describeSourceStore } from './sources.suite.js';
import { pgReachable, pgTestStores, reportUnreachable, sql } from '../support/postgres.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { IDENTITY_MIGRATION } from '../../src/store/postgres/sources.js';

const reachable = await pgReachable();
const stores = pgTestStores();
const rules = new Map<Store, NearDuplicateRule>();

const skipped = describeSourceStore('postgres', {
  skip: !reachable,
  async open(rule) {
    const store = await stores.open({ nearRule: rule });
    rules.set(store, rule);
    return store;
  },
  async peer(store) {
    const rule = rules.get(store)!;
    const p = await stores.peer(store, { nearRule: rule });
    rules.set(p, rule);
    return p;
  },
  async exec(store, text) {
    const schema = (store as PostgresStore).schema;
    await sql(`SET search_path = ${schema}; ${text}`);
  },
  async rewindIdentity(store) {
    const schema = (store as PostgresStore).schema;
    // The identity migration and every later one run again on reopen: what they add goes too.
    await sql(
      `ALTER TABLE ${schema}.seen_items DROP COLUMN reason; ALTER TABLE ${schema}.article_carriers DROP COLUMN reason; DROP TABLE IF EXISTS ${schema}.webhook_endpoints`,
    );
    await sql(`DELETE FROM ${schema}.schema_migrations WHERE version >= $1`, [
      MIGRATIONS.indexOf(IDENTITY_MIGRATION) + 1,
    ]);
  },
  async cleanup() {
    rules.clear();
    await stores.cleanup();
  },
});
reportUnreachable(reachable, skipped);

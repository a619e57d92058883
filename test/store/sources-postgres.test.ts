/** The SourceStore suite on PostgreSQL: a fresh schema per test (dropped afterwards); a peer is a second pool on it. */
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import type { NearDuplicateRule, Store } from '../../src/store/ports.js';
import { describeSourceStore } from './sources.suite.js';
import { dropSchemas, freshSchema, PG_TEST_URL, pgReachable, reportUnreachable } from '../support/postgres.js';

const reachable = await pgReachable();
const schemas: string[] = [];
const rules = new Map<Store, NearDuplicateRule>();

const skipped = describeSourceStore('postgres', {
  skip: !reachable,
  async open(rule) {
    const schema = freshSchema();
    schemas.push(schema);
    const store = await openPostgresStore(PG_TEST_URL, { schema, poolSize: 4, nearRule: rule });
    rules.set(store, rule);
    return store;
  },
  async peer(store) {
    const rule = rules.get(store)!;
    const p = await openPostgresStore(PG_TEST_URL, { schema: (store as PostgresStore).schema, poolSize: 4, nearRule: rule });
    rules.set(p, rule);
    return p;
  },
  async cleanup() {
    rules.clear();
    await dropSchemas(schemas.splice(0));
  },
});
reportUnreachable(reachable, skipped);

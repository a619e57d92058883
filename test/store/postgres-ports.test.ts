/** The shared store-port suite on PostgreSQL: a fresh schema per test, dropped afterwards. */
import { openPostgresStore, PostgresStore } from '../../src/store/postgres/index.js';
import { describeStorePorts } from './ports.suite.js';
import { dropSchemas, freshSchema, PG_TEST_URL, pgReachable, reportUnreachable } from '../support/postgres.js';

const reachable = await pgReachable();
const schemas: string[] = [];

const skipped = describeStorePorts('postgres', {
  leases: true,
  skip: !reachable,
  async open() {
    const schema = freshSchema();
    schemas.push(schema);
    return openPostgresStore(PG_TEST_URL, { schema, poolSize: 4 });
  },
  async peer(store) {
    // A second pool on the same schema: another instance's view.
    return openPostgresStore(PG_TEST_URL, { schema: (store as PostgresStore).schema, poolSize: 4 });
  },
  async cleanup() {
    await dropSchemas(schemas.splice(0));
  },
});
reportUnreachable(reachable, skipped);

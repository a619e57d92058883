/** The shared store-port suite on PostgreSQL: a fresh schema per test, dropped afterwards. */
import { describeStorePorts } from './ports.suite.js';
import { pgReachable, pgTestStores, reportUnreachable } from '../support/postgres.js';

const reachable = await pgReachable();
const stores = pgTestStores();

const skipped = describeStorePorts('postgres', {
  leases: true,
  skip: !reachable,
  open: () => stores.open(),
  // A second pool on the same schema: another instance's view.
  peer: (store) => stores.peer(store),
  cleanup: () => stores.cleanup(),
});
reportUnreachable(reachable, skipped);

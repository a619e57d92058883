/** The SourceStore suite on PostgreSQL: a fresh schema per test (dropped afterwards); a peer is a second pool on it. */
import type { NearDuplicateRule, Store } from '../../src/store/ports.js';
import { describeSourceStore } from './sources.suite.js';
import { pgReachable, pgTestStores, reportUnreachable } from '../support/postgres.js';

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
  async cleanup() {
    rules.clear();
    await stores.cleanup();
  },
});
reportUnreachable(reachable, skipped);

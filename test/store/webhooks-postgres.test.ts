/**
 * The WebhookStore suite on PostgreSQL: a fresh schema per test (dropped afterwards); a peer is a second pool on it.
 */
import { describeWebhookStore } from './webhooks.suite.js';
import { pgReachable, pgTestStores, reportUnreachable } from '../support/postgres.js';

const reachable = await pgReachable();
const stores = pgTestStores();

const skipped = describeWebhookStore('postgres', {
  skip: !reachable,
  open: () => stores.open(),
  peer: (store) => stores.peer(store),
  cleanup: () => stores.cleanup(),
});
reportUnreachable(reachable, skipped);

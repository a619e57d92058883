/**
 * Webhooks with two `fns serve` instances on PostgreSQL: each article reaches each endpoint
 * once in normal operation (one instance holds an endpoint at a time, by lease), and when the holder is
 * killed (kill -9) the other takes its endpoints over within the lease time, losing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISPATCH_DEFAULTS } from '../../src/webhooks/index.js';
import { ndjson } from '../cli/support.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { missingEngines } from './engines.js';
import { createKey, deployment, type Deployment, type Instance } from './support.js';

const missing = await missingEngines('test/scale/webhooks.test.ts', 2);
const ENDPOINTS = 4;

/** (endpoint, article) of a received request: the webhook-id names both. */
const pairs = (r: Receiver) => r.received.map((x) => String(x.headers['webhook-id']));
const contentOf = (body: string) => (JSON.parse(body) as { data: { content: string } }).data.content;

describe.skipIf(missing.length > 0)('webhooks from two instances on PostgreSQL', () => {
  let d: Deployment;
  let a: Instance;
  let b: Instance;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    d = await deployment();
    // Loopback receiver: the CLI and both instances allow private destinations.
    d.env.WEBHOOK_ALLOW_PRIVATE = 'true';
    expect(d.fns(['migrate']).status).toBe(0);
    for (let i = 0; i < ENDPOINTS; i++) {
      const { account_id } = createKey(d, 'pro');
      const r = d.fns(['webhooks', 'add', account_id, `${receiver.url}?e=${i}`], undefined);
      if (r.status !== 0) throw new Error(r.stderr);
    }
    [a, b] = await Promise.all([d.serve(), d.serve()]);
  }, 90_000);
  afterAll(async () => {
    await d?.close();
    await receiver?.close();
  }, 60_000);

  it('delivers each article to each endpoint exactly once in normal operation', async () => {
    const r = d.fns(['articles', 'ingest', '-'], ndjson(25, 'Normal'));
    expect(r.status, r.stderr).toBe(0);
    await receiver.waitFor(25 * ENDPOINTS);
    // Every cursor written at the end of the feed: nothing is left for either instance to (re)send.
    for (;;) {
      const list = JSON.parse(d.fns(['webhooks', 'list', '--json']).stdout) as { webhooks: { backlog: number }[] };
      if (list.webhooks.every((w) => w.backlog === 0)) break;
    }
    const ids = pairs(receiver);
    expect(ids).toHaveLength(25 * ENDPOINTS);
    expect(new Set(ids).size).toBe(25 * ENDPOINTS);
  }, 60_000);

  it('a killed instance: the other takes its endpoints over within the lease time; nothing is lost', async () => {
    const before = receiver.received.length;
    // The instance that holds the endpoints is the one that logged the deliveries: kill that one.
    const deliveries = (i: Instance) => (i.output().match(/"outcome":"delivered"/g) ?? []).length;
    const [holder, other] = deliveries(a) >= deliveries(b) ? [a, b] : [b, a];
    expect(deliveries(holder)).toBeGreaterThan(0);
    await holder.stop('SIGKILL');
    const r = d.fns(['articles', 'ingest', '-'], ndjson(10, 'Takeover'));
    expect(r.status, r.stderr).toBe(0);
    const killedAt = Date.now();
    const ids = new Set<string>();
    while (ids.size < 10 * ENDPOINTS) {
      await receiver.waitFor(receiver.received.length + 1);
      for (const x of receiver.received.slice(before))
        if (contentOf(x.body).startsWith('Takeover')) ids.add(String(x.headers['webhook-id']));
    }
    // The lease of the dead holder had to run out first (it renews every refreshMs).
    expect(Date.now() - killedAt).toBeGreaterThan(DISPATCH_DEFAULTS.leaseMs - 2 * DISPATCH_DEFAULTS.refreshMs - 1000);
    expect(Date.now() - killedAt).toBeLessThan(DISPATCH_DEFAULTS.leaseMs + 10_000);
    expect(other.child.exitCode).toBeNull();
  }, 90_000);
});

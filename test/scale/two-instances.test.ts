/**
 * Two `fns serve` processes sharing PostgreSQL and Redis behave as one service: exact limits,
 * one stream slot per account, every article on both, a dead instance's slot freed by its lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plans, stream, streamAddress } from '../../src/contract/index.js';
import { get } from '../support/service.js';
import { connect, type TestClient } from '../stream/support.js';
import { missingEngines } from './engines.js';
import { createKey, deployment, streamOutcome, type Deployment, type Instance } from './support.js';
import { until } from '../support/wait.js';

const TESTS = 6;
/** The stream address of an instance. */
const ws = (i: Instance) => `${i.url.replace(/^http/, 'ws')}${streamAddress}`;
const missing = await missingEngines('test/scale/two-instances.test.ts', TESTS);

describe.skipIf(missing.length > 0)('two instances on PostgreSQL and Redis', () => {
  let d: Deployment;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    d = await deployment();
    const migrate = d.fns(['migrate']);
    expect(migrate.status, migrate.stderr).toBe(0);
    [a, b] = await Promise.all([d.serve(), d.serve()]);
  }, 90_000);
  afterAll(async () => d?.close(), 60_000);

  it.each(['starter', 'pro'] as const)(
    'admits exactly the %s plan out of 200 concurrent requests spread over both',
    async (tier) => {
      const { key } = createKey(d, tier);
      const ip = tier === 'starter' ? '127.91.0.1' : '127.91.0.2';
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, i) => get((i % 2 ? a : b).port, '/v1/news?limit=1', { key, ip })),
      );
      const admitted = replies.filter((r) => r.status === 200).length;
      expect(admitted).toBe(plans[tier].rateLimit);
      expect(replies.filter((r) => r.status !== 200).every((r) => r.status === 429)).toBe(true);
    },
  );

  it('opens exactly one of 50 simultaneous stream connects for one account spread over both', async () => {
    const { key } = createKey(d, 'pro');
    const clients: TestClient[] = Array.from({ length: 50 }, (_, i) =>
      connect(ws(i % 2 ? a : b), { key, ip: '127.91.1.1' }),
    );
    const outcomes = await Promise.all(
      clients.map((c) =>
        c.opened.then(() => Promise.race([c.closed, new Promise((r) => setTimeout(() => r('open'), 1500))])),
      ),
    );
    const open = outcomes.filter((o) => o === 'open');
    expect(open).toHaveLength(1);
    for (const o of outcomes) if (o !== 'open') expect(o).toEqual(stream.closeCodes.secondConnection);
    for (const c of clients) c.ws.close();
  });

  it('delivers an article ingested with the CLI to clients of both instances', async () => {
    const onA = connect(ws(a), { key: createKey(d, 'pro').key, ip: '127.91.2.1' });
    const onB = connect(ws(b), { key: createKey(d, 'max').key, ip: '127.91.2.2' });
    await Promise.all([onA.opened, onB.opened]);
    const r = d.fns(
      ['articles', 'ingest', '-', '--json'],
      '{"content":"FLASH: copper output halted at the world\'s largest mine"}\n',
    );
    expect(r.status, r.stderr).toBe(0);
    const [id] = JSON.parse(r.stdout).ids;
    const [gotA, gotB] = await Promise.all([onA.received(1, 10_000), onB.received(1, 10_000)]);
    expect(gotA.map((m) => m.id)).toEqual([id]);
    expect(gotB.map((m) => m.id)).toEqual([id]);
    expect(gotB[0]).toHaveProperty('tickers');
    expect(gotA[0]).not.toHaveProperty('tickers');
    onA.ws.close();
    onB.ws.close();
  });

  it('serves the same status report from both, an operator note included', async () => {
    const note = d.fns(['status', 'note', 'Harbor Wire is late today; we are on it', '--json']);
    expect(note.status, note.stderr).toBe(0);
    const id = JSON.parse(note.stdout).id as string;
    let bodies: string[] = [];
    const same = async () => {
      bodies = await Promise.all([a, b].map(async (i) => (await fetch(`${i.url}/v1/status`)).text()));
      return bodies[0] === bodies[1] && bodies[0]!.includes(id);
    };
    await until(same, 'both instances to serve one report with the note', 20_000, 100);
    const report = JSON.parse(bodies[0]!);
    expect(report.incidents).toContainEqual(expect.objectContaining({ id, kind: 'note', ended_at: null }));
    const resolved = d.fns(['status', 'resolve', id]);
    expect(resolved.status, resolved.stderr).toBe(0);
  }, 30_000);

  it('frees the slot of an instance killed with SIGKILL within 30 s', async () => {
    const { key, key_id } = createKey(d, 'pro');
    const held = connect(ws(a), { key, ip: '127.91.3.1' });
    expect(await streamOutcome(a, held, key_id)).toBe('open');
    await a.stop('SIGKILL');
    let reopened: TestClient | undefined;
    // A new connection to the other instance after each refusal, until one is admitted.
    const opens = async () => {
      const c = connect(ws(b), { key, ip: '127.91.3.2' });
      if ((await streamOutcome(b, c, key_id)) === 'open') reopened = c;
      return reopened !== undefined;
    };
    await until(opens, 'the account to connect again', 30_000, 500);
    reopened!.ws.close();
  }, 45_000);
});

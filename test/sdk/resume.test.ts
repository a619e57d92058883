/**
 * The client's stream resume, end to end: a 10,000-article burst read through `client.stream()` over a
 * connection that a TCP proxy cuts at random points (the client sees abnormal closures, as on a real
 * network). The client reconnects with backoff and `after=<last id>` on its own; what it yields must be
 * the burst exactly: no gap, no duplicate, same order. Against the mock and the real service.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FnsClient, type StreamEvent } from '../../clients/typescript/src/index.js';
import { mockTarget, realTarget, rng, type Target } from '../parity/burst-targets.js';

/** A loopback TCP proxy to `target` that cuts each connection after a random number of bytes from upstream. */
async function cuttingProxy(
  target: URL,
  random: () => number,
  meanBytes: number,
): Promise<{ url: string; cuts: () => number; close: () => Promise<void> }> {
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    let budget = Math.floor(meanBytes * (0.2 + random() * 1.6));
    const cut = () => {
      cuts++;
      client.destroy();
      upstream.destroy();
    };
    upstream.on('data', (chunk: Buffer) => {
      budget -= chunk.length;
      if (budget <= 0) cut();
      else client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    for (const s of [client, upstream]) {
      s.on('error', () => (client.destroy(), upstream.destroy()));
      s.on('close', () => (client.destroy(), upstream.destroy(), sockets.delete(s)));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cuts: () => cuts,
    close: () => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))),
  };
}

describe.each([
  ['mock', mockTarget, 7],
  ['real service', realTarget, 8],
] as const)('the client resumes through dropped connections against the %s', (_name, start, seed) => {
  let t: Target;
  beforeAll(async () => {
    t = await start();
  });
  afterAll(() => t.close());

  it('yields a 10,000-article burst exactly: no gap, no duplicate, same order', async () => {
    const [anchor] = await t.burst(1);
    const upstream = new URL(t.wsUrl.replace(/^ws/, 'http'));
    const proxy = await cuttingProxy(upstream, rng(seed), 300_000);
    try {
      const events: StreamEvent[] = [];
      // The first connection's open event (the burst waits for it).
      let opened = () => {};
      const firstOpen = new Promise<void>((resolve) => (opened = resolve));
      const onEvent = (e: StreamEvent) => {
        events.push(e);
        if (e.type === 'open') opened();
      };
      const fns = new FnsClient({ baseUrl: proxy.url, apiKey: t.keys.max });
      const total = 10_000;
      const got: string[] = [];
      const reading = (async () => {
        for await (const a of fns.stream({ after: anchor, backoff: { initialMs: 5, maxMs: 50 }, onEvent })) {
          got.push(a.id);
          if (got.length === total) break;
        }
      })();
      // The burst starts once the first connection is open, so part of it is live and part replayed.
      await Promise.race([firstOpen, reading]); // a stream that fails before it opens fails the test here
      const produced = await t.burst(total);
      await reading;
      expect(proxy.cuts()).toBeGreaterThanOrEqual(3);
      expect(events.filter((e) => e.type === 'retry').length).toBe(proxy.cuts());
      expect(got.length).toBe(produced.length);
      expect(got).toEqual(produced);
    } finally {
      await proxy.close();
    }
  }, 180_000);
});

/**
 * The sliced fan-out over real sockets, with the slice forced to its minimum (`fanOutSliceMs: 0`: the
 * fan-out yields to the event loop after every connection): order per connection and the
 * slow-consumer rule hold exactly as with one pass.
 */
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { stream } from '../../src/contract/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { connectAdmitted, useStreamHarness, waitFor, type TestClient } from './support.js';

const BOUND = 64 * 1024;
const ctx = useStreamHarness({ maxBufferedBytes: BOUND, fanOutSliceMs: 0 });

describe('sliced fan-out: every connection gets every article once, in store order', () => {
  it('delivers commits that arrive while earlier ones are still going out, in order, to 40 connections', async () => {
    const clients: TestClient[] = [];
    for (let i = 0; i < 40; i++)
      clients.push(
        await connectAdmitted(ctx.h, { key: (await ctx.h.key(i % 2 ? 'pro' : 'max')).key, ip: `127.0.9.${i + 1}` }),
      );
    const cli = new SqliteStore(ctx.h.file);
    const contents: string[] = [];
    try {
      // Separate commits, back to back from another connection, plus one large batch in between.
      for (let round = 0; round < 8; round++) {
        const n = round === 3 ? 60 : 1 + (round % 3);
        const batch = Array.from({ length: n }, (_, i) => `r${round} i${i}`);
        contents.push(...batch);
        await cli.articles.insert(
          batch.map((content) => ({
            content,
            urgency: 'regular' as const,
            sentiment: null,
            published_at: null,
            tickers: [],
          })),
          ctx.h.clock.now,
        );
        ctx.h.stream.wake(); // read at once: commits land while earlier ones are still going out
      }
    } finally {
      cli.close();
    }
    for (const c of clients) {
      await c.received(contents.length, 10_000);
      expect(c.messages.map((m) => m.content)).toEqual(contents);
    }
  });
});

describe('sliced fan-out: a client that stops reading is still closed with 1013 "Slow consumer"', () => {
  it('closes the paused client and keeps the readers whole', async () => {
    const stalled = await connectAdmitted(ctx.h, { key: (await ctx.h.key('pro')).key, ip: '127.0.10.1' });
    const readers: TestClient[] = [];
    for (let i = 0; i < 20; i++)
      readers.push(await connectAdmitted(ctx.h, { key: (await ctx.h.key('max')).key, ip: `127.0.10.${i + 2}` }));
    (stalled.ws as unknown as { _socket: Socket })._socket.pause();

    const big = 'x'.repeat(19_000);
    let sent = 0;
    for (let chunk = 0; chunk < 100 && ctx.h.stream.connections() === readers.length + 1; chunk++) {
      await ctx.h.ingest(Array.from({ length: 10 }, (_, i) => ({ content: `${chunk}/${i} ${big}` })));
      sent += 10;
      for (const r of readers) await r.received(sent);
    }
    expect(ctx.h.stream.connections()).toBe(readers.length);
    for (const r of readers) {
      expect(r.isOpen).toBe(true);
      expect(r.messages.map((m) => m.content)).toEqual(readers[0]!.messages.map((m) => m.content));
      expect(r.messages).toHaveLength(sent);
    }
    (stalled.ws as unknown as { _socket: Socket })._socket.resume();
    expect(await stalled.closed).toEqual(stream.closeCodes.slowConsumer);
    expect(stalled.messages.length).toBeLessThan(sent);
    expect(stalled.messages.map((m) => m.content)).toEqual(
      readers[0]!.messages.slice(0, stalled.messages.length).map((m) => m.content),
    );
    await waitFor(() => ctx.h.slots.inUse() === readers.length, 'slot release');
  });
});

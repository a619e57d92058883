/** Slow consumer (asyncapi.yaml): a send buffer past the bound ends the connection with 1013. */
import { describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { stream } from '../../src/contract/index.js';
import { connectAdmitted, waitFor, useStreamHarness } from './support.js';

const BOUND = 64 * 1024;
const ctx = useStreamHarness({ maxBufferedBytes: BOUND });

describe('slow consumer: a client that stops reading is closed with 1013 "Slow consumer"', () => {
  it('closes the client that paused its socket during a burst, and keeps the one that reads', async () => {
    const stalled = await connectAdmitted(ctx.h, { key: (await ctx.h.key('pro')).key, ip: '127.0.6.1' });
    const reader = await connectAdmitted(ctx.h, { key: (await ctx.h.key('max')).key, ip: '127.0.6.2' });
    const socket = (stalled.ws as unknown as { _socket: Socket })._socket;
    socket.pause();

    // Chunks of ~400 KB; each is waited for by the reader, so the reader never lags behind.
    const big = 'x'.repeat(19_000);
    let sent = 0;
    for (let chunk = 0; chunk < 100 && ctx.h.stream.connections() === 2; chunk++) {
      await ctx.h.ingest(Array.from({ length: 20 }, (_, i) => ({ content: `${chunk}/${i} ${big}` })));
      sent += 20;
      await reader.received(sent);
    }
    expect(ctx.h.stream.connections()).toBe(1);
    expect(reader.isOpen).toBe(true);
    expect(reader.messages).toHaveLength(sent);

    socket.resume();
    expect(await stalled.closed).toEqual(stream.closeCodes.slowConsumer);
    // It got a prefix of the stream, in order, and then nothing more was queued for it.
    expect(stalled.messages.length).toBeLessThan(sent);
    expect(stalled.messages.map((m) => m.content)).toEqual(
      reader.messages.slice(0, stalled.messages.length).map((m) => m.content),
    );
    await waitFor(() => ctx.h.slots.inUse() === 1, 'slot release');
  });
});

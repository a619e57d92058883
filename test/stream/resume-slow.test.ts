/**
 * A slow replay reader (asyncapi.yaml: "The replay is sent as fast as the client reads it, under the
 * same slow-consumer rule as live messages"): paced by the client's reading, closed with 1013 when its
 * send buffer is past the bound as live articles arrive for it.
 */
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { streamRules } from '../../generated/stream.js';
import { connectAdmitted, useStreamHarness, waitFor, type StreamHarness } from './support.js';

const withAfter = (h: StreamHarness, after: string) => `${h.url}?after=${after}`;

const small = useStreamHarness({ maxBufferedBytes: 64 * 1024, feedPollMs: 20 });

describe('slow replay reader: closed with 1013 "Slow consumer" like a slow live consumer', () => {
  it('closes a client that stops reading during its replay once articles keep arriving; a reader of the same replay stays', async () => {
    const big = 'x'.repeat(19_000);
    for (let i = 0; i < 10; i++)
      await small.h.ingest(Array.from({ length: 40 }, (_, j) => ({ content: `${i}/${j} ${big}` })));
    const replayed = 400;
    const stalled = await connectAdmitted(small.h, {
      url: withAfter(small.h, '0'.repeat(26)),
      key: (await small.h.key('max')).key,
      ip: '127.0.7.3',
    });
    (stalled.ws as unknown as { _socket: Socket })._socket.pause();
    const reader = await connectAdmitted(small.h, {
      url: withAfter(small.h, '0'.repeat(26)),
      key: (await small.h.key('pro')).key,
      ip: '127.0.7.4',
    });
    await reader.received(replayed, 20_000);
    let sent = 0;
    for (let chunk = 0; chunk < 100 && small.h.stream.connections() === 2; chunk++) {
      await small.h.ingest(Array.from({ length: 5 }, (_, i) => ({ content: `live ${chunk}/${i} ${big}` })));
      sent += 5;
      await reader.received(replayed + sent, 10_000);
    }
    expect(small.h.stream.connections()).toBe(1);
    expect(reader.messages).toHaveLength(replayed + sent);
    (stalled.ws as unknown as { _socket: Socket })._socket.resume();
    expect(await stalled.closed).toEqual(streamRules.closeCodes.slowConsumer);
    expect(stalled.messages.length).toBeLessThan(replayed + sent);
    // What it got is a prefix of what the reader got.
    expect(stalled.messages.map((m) => m.id)).toEqual(
      reader.messages.slice(0, stalled.messages.length).map((m) => m.id),
    );
    await waitFor(() => small.h.slots.inUse() === 1, 'slot release');
  });
});

/**
 * Liveness during a replay (asyncapi.yaml "Telling a dead connection from a quiet market"): the server
 * pings every interval whatever the connection is doing, so a client never goes `deadAfterSeconds`
 * without a frame; a client that does not answer is terminated and its slot freed.
 */
import { describe, expect, it } from 'vitest';
import { REPLAY_PAGE } from '../../src/stream/index.js';
import { connectAdmitted, useStreamHarness, waitFor, type StreamHarness } from './support.js';

const withAfter = (h: StreamHarness, after: string) => `${h.url}?after=${after}`;

// A replay must meet the keep-alive, not the slow-consumer bound: with a bound well above one replay
// page (200 articles of 10 kB), the replay waits for a reader that pauses or stalls instead of
// overflowing it, and the interval leaves a reading client time to get through what is queued ahead of
// a ping.
const harness = useStreamHarness({ pingIntervalMs: 200, maxBufferedBytes: 8 * 1024 * 1024 });

describe('liveness: pings reach a replaying connection as they reach a live one', () => {
  it('a client whose replay is stalled (it does not read) is still pinged and, not answering, terminated', async () => {
    const big = 'x'.repeat(10_000);
    for (let i = 0; i < 10; i++)
      await harness.h.ingest(Array.from({ length: 100 }, (_, j) => ({ content: `${i}/${j} ${big}` })));
    const c = await connectAdmitted(harness.h, {
      url: withAfter(harness.h, '0'.repeat(26)),
      key: (await harness.h.key('max')).key,
      autoPong: false,
    });
    const closed = await c.closed;
    expect(closed.code).toBe(1006); // terminated by the keep-alive
    await waitFor(() => harness.h.slots.inUse() === 0, 'slot release');
  });

  it('a reading client receives pings during a long replay', async () => {
    const big = 'x'.repeat(2_000);
    for (let i = 0; i < 20; i++)
      await harness.h.ingest(Array.from({ length: 250 }, (_, j) => ({ content: `${i}/${j} ${big}` })));
    // The replay is made long in events, not in time: after its first page, each page is read only once
    // the client has received one more ping. If the service did not ping a replaying connection, the
    // replay would stall here and the client would not get its 5,000 articles.
    const store = harness.h.store;
    const feedAfter = store.articles.feedAfter.bind(store.articles);
    let pagesServed = 0;
    let c: Awaited<ReturnType<typeof connectAdmitted>> | undefined = undefined;
    store.articles.feedAfter = async (seq, limit) => {
      if (limit === REPLAY_PAGE && pagesServed++ > 0) {
        const pingsBefore = pagesServed - 1;
        await waitFor(() => (c?.pings ?? 0) >= pingsBefore || c?.closeEvent !== undefined, 'a ping during the replay');
      }
      return feedAfter(seq, limit);
    };
    const messagesAtPing: number[] = [];
    c = await connectAdmitted(harness.h, {
      url: withAfter(harness.h, '0'.repeat(26)),
      key: (await harness.h.key('max')).key,
    });
    c.ws.on('ping', () => messagesAtPing.push(c!.messages.length));
    await c.received(5000, 20_000);
    expect(c.closeEvent).toBeUndefined();
    expect(c.messages).toHaveLength(5000);
    expect(c.isOpen).toBe(true);
    expect(messagesAtPing.filter((n) => n < 5000).length).toBeGreaterThanOrEqual(5000 / REPLAY_PAGE - 1);
  });
});

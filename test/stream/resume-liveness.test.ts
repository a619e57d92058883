/**
 * Liveness during a replay (asyncapi.yaml "Telling a dead connection from a quiet market"): the server
 * pings every interval whatever the connection is doing, so a client never goes `deadAfterSeconds`
 * without a frame; a client that does not answer is terminated and its slot freed.
 */
import { describe, expect, it } from 'vitest';
import { connectAdmitted, useStreamHarness, waitFor, type StreamHarness } from './support.js';

const withAfter = (h: StreamHarness, after: string) => `${h.url}?after=${after}`;

// The interval must leave a reading client time to get through what is queued ahead of a ping (bound / 2 plus the kernel's buffers).
const pinged = useStreamHarness({ pingIntervalMs: 200, maxBufferedBytes: 256 * 1024 });
// A stalled reader must meet the keep-alive, not the slow-consumer bound: with a bound well above one
// replay page (200 articles of 10 kB), the replay waits for the reader instead of overflowing it.
const stalled = useStreamHarness({ pingIntervalMs: 200, maxBufferedBytes: 8 * 1024 * 1024 });

describe('liveness: pings reach a replaying connection as they reach a live one', () => {
  it('a client whose replay is stalled (it does not read) is still pinged and, not answering, terminated', async () => {
    const big = 'x'.repeat(10_000);
    for (let i = 0; i < 10; i++) await stalled.h.ingest(Array.from({ length: 100 }, (_, j) => ({ content: `${i}/${j} ${big}` })));
    const c = await connectAdmitted(stalled.h, { url: withAfter(stalled.h, '0'.repeat(26)), key: (await stalled.h.key('max')).key, autoPong: false });
    const closed = await c.closed;
    expect(closed.code).toBe(1006); // terminated by the keep-alive
    await waitFor(() => stalled.h.slots.inUse() === 0, 'slot release');
  });

  it('a reading client receives pings during a long replay', async () => {
    const big = 'x'.repeat(2_000);
    for (let i = 0; i < 20; i++) await pinged.h.ingest(Array.from({ length: 250 }, (_, j) => ({ content: `${i}/${j} ${big}` })));
    const c = await connectAdmitted(pinged.h, { url: withAfter(pinged.h, '0'.repeat(26)), key: (await pinged.h.key('max')).key });
    await c.received(5000, 20_000);
    expect(c.closeEvent).toBeUndefined();
    expect(c.messages).toHaveLength(5000);
    expect(c.isOpen).toBe(true);
    expect(c.pings).toBeGreaterThanOrEqual(1);
  });
});


/** Keep-alive (asyncapi.yaml): protocol pings; a peer that has not answered the previous ping is cut off. */
import { describe, expect, it } from 'vitest';
import { connectAdmitted, waitFor, useStreamHarness } from './support.js';

const PING_MS = 40;
const ctx = useStreamHarness({ pingIntervalMs: PING_MS });

describe('keep-alive: a peer that does not answer pings is terminated and its slot freed', () => {
  it('terminates a client that never pongs, frees the slot, and lets the account connect again', async () => {
    const { key } = await ctx.h.key('pro');
    const silent = await connectAdmitted(ctx.h, { key, autoPong: false });
    const closed = await silent.closed;
    // Terminated, not closed with a close frame: the client sees an abnormal closure.
    expect(closed.code).toBe(1006);
    expect(silent.pings).toBeGreaterThanOrEqual(1);
    await waitFor(() => ctx.h.slots.inUse() === 0, 'slot release');
    const next = await connectAdmitted(ctx.h, { key });
    await ctx.h.ingest([{ content: 'back again' }]);
    expect((await next.received(1)).map((m) => m.content)).toEqual(['back again']);
  });

  it('keeps a client that answers pings open across many ping intervals', async () => {
    const { key } = await ctx.h.key('max');
    const c = await connectAdmitted(ctx.h, { key });
    await waitFor(() => c.pings >= 5, 'five pings');
    expect(c.isOpen).toBe(true);
    expect(ctx.h.stream.connections()).toBe(1);
    // Pings are protocol frames: no application message was sent.
    expect(c.messages).toEqual([]);
  });
});

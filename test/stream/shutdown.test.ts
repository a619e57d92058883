/** Graceful shutdown (asyncapi.yaml): every connection is closed with 1001 "Server shutting down". */
import { describe, expect, it } from 'vitest';
import { stream } from '../../src/contract/index.js';
import { connectAdmitted, useStreamHarness } from './support.js';

const ctx = useStreamHarness();

describe('shutdown: close() ends every connection with 1001 and stops delivering', () => {
  it('closes all open connections with 1001 "Server shutting down" and frees their slots', async () => {
    const a = await connectAdmitted(ctx.h, { key: (await ctx.h.key('pro')).key, ip: '127.0.7.1' });
    const b = await connectAdmitted(ctx.h, { key: (await ctx.h.key('max')).key, ip: '127.0.7.2' });
    await ctx.h.stream.close();
    expect(await a.closed).toEqual(stream.closeCodes.shuttingDown);
    expect(await b.closed).toEqual(stream.closeCodes.shuttingDown);
    expect(ctx.h.stream.connections()).toBe(0);
    expect(ctx.h.slots.inUse()).toBe(0);
    await ctx.h.ingest([{ content: 'after shutdown' }]);
    expect(a.messages).toEqual([]);
  });
});

/** Graceful shutdown (asyncapi.yaml): every connection is closed with 1001 "Server shutting down". */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stream } from '../../src/contract/index.js';
import { connectAdmitted, dropClients, startStream, type StreamHarness } from './support.js';

let h: StreamHarness;
beforeEach(async () => {
  h = await startStream();
});
afterEach(async () => {
  expect(dropClients()).toEqual([]);
  await h.close();
});

describe('shutdown: close() ends every connection with 1001 and stops delivering', () => {
  it('closes all open connections with 1001 "Server shutting down" and frees their slots', async () => {
    const a = await connectAdmitted(h, { key: (await h.key('pro')).key, ip: '127.0.7.1' });
    const b = await connectAdmitted(h, { key: (await h.key('max')).key, ip: '127.0.7.2' });
    await h.stream.close();
    expect(await a.closed).toEqual(stream.closeCodes.shuttingDown);
    expect(await b.closed).toEqual(stream.closeCodes.shuttingDown);
    expect(h.stream.connections()).toBe(0);
    expect(h.slots.inUse()).toBe(0);
    await h.ingest([{ content: 'after shutdown' }]);
    expect(a.messages).toEqual([]);
  });
});

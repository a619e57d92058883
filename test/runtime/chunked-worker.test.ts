/**
 * ChunkedWorker (src/runtime/off-thread.ts), the flow every large ingestion input takes from its worker
 * thread: chunks in order, the next one only once the consumer took the one before, and a consumer that
 * throws stops the worker's request. A worker of this suite (chunk-worker.mjs) speaks the protocol with
 * the service's own worker side. Machine independent: no durations; a second call to the same worker
 * is the barrier (its answer comes after anything the worker sent before it).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ChunkedWorker } from '../../src/runtime/off-thread.js';

type Req = { count: number; size: number } | { ask: 'cancelled' };
const worker = new ChunkedWorker<Req, number, unknown>(
  new URL('./chunk-worker.mjs', import.meta.url),
  (e) => new Error(e.message),
);
afterAll(() => worker.stop());

/** Everything the worker sent before now has been received: a second call's answer comes after it. */
const barrier = () => worker.call({ ask: 'cancelled' });

describe('ChunkedWorker: chunks in order, each after the one before was taken', () => {
  it('while the consumer holds a chunk, the worker sends no other; every item once, in order', async () => {
    const got: number[][] = [];
    let release = () => {};
    let arrived = () => {};
    let arrival = new Promise<void>((r) => (arrived = r));
    const call = worker.stream({ count: 5, size: 10 }, (chunk) => {
      got.push(chunk);
      arrived();
      return new Promise<void>((r) => (release = r));
    });
    for (let n = 1; n <= 5; n++) {
      await arrival;
      await barrier();
      expect(got).toHaveLength(n);
      arrival = new Promise<void>((r) => (arrived = r));
      release();
    }
    expect(await call).toBe('sent 50');
    expect(got.flat()).toEqual([...Array(50).keys()]);
  });

  it('call() gathers the items of every chunk and the final answer', async () => {
    expect(await worker.call({ count: 3, size: 4 })).toEqual({ items: [...Array(12).keys()], done: 'sent 12' });
  });
});

describe('ChunkedWorker: a consumer that throws ends the call', () => {
  it("the call rejects with the consumer's error, no chunk comes after it, and the worker stops that request", async () => {
    const boom = new Error('the store failed');
    let chunks = 0;
    const err = await worker
      .stream({ count: 100, size: 10 }, () => {
        chunks++;
        throw boom;
      })
      .catch((e: unknown) => e);
    expect(err).toBe(boom);
    const { done: stopped } = await barrier();
    expect(chunks).toBe(1);
    // The worker was told: it stopped the request instead of waiting for ever with its data.
    expect(stopped).toHaveLength(1);
    // And it answers the next call.
    expect((await worker.call({ count: 2, size: 3 })).done).toBe('sent 6');
  });
});

/** The subscription re-check (spec §3: every 5 minutes; here a short interval, STREAM_RECHECK_MS). */
import { describe, expect, it } from 'vitest';
import { stream } from '../../src/contract/index.js';
import { connect, connectAdmitted, LIVE, waitFor, useStreamHarness } from './support.js';

const RECHECK_MS = 50;
const ctx = useStreamHarness({ recheckMs: RECHECK_MS });

const expired = stream.closeCodes.subscriptionExpired;

/**
 * Proof that a full re-check pass ran after now: a witness connection (opened after the ones under
 * test, so checked after them in the same pass) whose account is cancelled, and waited for.
 */
async function fullRecheckPass(ip: string): Promise<void> {
  const w = await ctx.h.key('pro');
  const witness = await connectAdmitted(ctx.h, { key: w.key, ip });
  await ctx.h.store.accounts.cancel(w.account_id, ctx.h.clock.now);
  expect(await witness.closed).toEqual(expired);
}

describe('re-check: an account that can no longer stream is closed with 1008 "Subscription expired"', () => {
  it('closes a cancelled account (now expired) and keeps an unaffected one open', async () => {
    const cancelled = await ctx.h.key('pro');
    const kept = await ctx.h.key('max');
    const a = await connectAdmitted(ctx.h, { key: cancelled.key, ip: '127.0.5.1' });
    const b = await connectAdmitted(ctx.h, { key: kept.key, ip: '127.0.5.2' });
    await ctx.h.store.accounts.cancel(cancelled.account_id, ctx.h.clock.now);
    expect(await a.closed).toEqual(expired);
    await fullRecheckPass('127.0.5.3');
    expect(b.isOpen).toBe(true);
    await ctx.h.ingest([{ content: 'after the re-check' }]);
    expect((await b.received(1)).map((m) => m.content)).toEqual(['after the re-check']);
    expect(a.messages).toEqual([]);
  });

  it('closes an account downgraded to starter', async () => {
    const { key, account_id } = await ctx.h.key('max');
    const c = await connectAdmitted(ctx.h, { key });
    await ctx.h.store.accounts.setTier(account_id, 'starter', ctx.h.clock.now);
    expect(await c.closed).toEqual(expired);
  });

  it('closes an account moved to free', async () => {
    const { key, account_id } = await ctx.h.key('pro');
    const c = await connectAdmitted(ctx.h, { key });
    await ctx.h.store.accounts.setTier(account_id, 'free', ctx.h.clock.now);
    expect(await c.closed).toEqual(expired);
  });

  it('closes a connection whose key was deactivated', async () => {
    const { key, key_id } = await ctx.h.key('pro');
    const c = await connectAdmitted(ctx.h, { key });
    await ctx.h.store.accounts.setKeyActive(key_id, false);
    expect(await c.closed).toEqual(expired);
  });

  it('frees the slot of a closed connection: a re-subscribed account can connect again', async () => {
    const { key, account_id } = await ctx.h.key('pro');
    const c = await connectAdmitted(ctx.h, { key });
    await ctx.h.store.accounts.cancel(account_id, ctx.h.clock.now);
    await c.closed;
    await waitFor(() => ctx.h.slots.inUse() === 0, 'slot release');
    await ctx.h.store.accounts.setTier(account_id, 'pro', ctx.h.clock.now);
    expect((await connectAdmitted(ctx.h, { key })).isOpen).toBe(true);
  });
});

describe('re-check: a change between pro and max switches the tickers variant', () => {
  it('adds tickers after an upgrade from pro to max', async () => {
    const { key, account_id } = await ctx.h.key('pro');
    const c = await connectAdmitted(ctx.h, { key });
    await ctx.h.ingest([{ content: 'before', tickers: [{ ticker: 'MSFT', sentiment: 'neutral', relevance: 1 }] }]);
    await c.received(1);
    await ctx.h.store.accounts.setTier(account_id, 'max', ctx.h.clock.now);
    await fullRecheckPass('127.0.5.4');
    await ctx.h.ingest([{ content: 'after', tickers: [{ ticker: 'MSFT', sentiment: 'neutral', relevance: 1 }] }]);
    const msgs = await c.received(2);
    expect(msgs.map((m) => [m.content, m.tickers])).toEqual([
      ['before', undefined],
      ['after', [{ ticker: 'MSFT', sentiment: 'neutral', relevance: 1 }]],
    ]);
  });
});

describe('re-check: re-checks do not count against the IP guard', () => {
  it('keeps a stream open after its IP is blocked by other keys, through many re-checks', async () => {
    const ip = '127.0.5.9';
    const { key } = await ctx.h.key('pro');
    const c = await connectAdmitted(ctx.h, { key, ip });
    // Two more distinct keys from the same address: the IP is now blocked for new attempts.
    await connect(ctx.h.url, { key: `${LIVE}wrong-one`, ip }).closed;
    expect(await connect(ctx.h.url, { key: `${LIVE}wrong-two`, ip }).closed).toEqual(stream.closeCodes.inactiveKey);
    await fullRecheckPass('127.0.5.10');
    await fullRecheckPass('127.0.5.11');
    expect(c.isOpen).toBe(true);
    await ctx.h.ingest([{ content: 'still streaming' }]);
    expect((await c.received(1)).map((m) => m.content)).toEqual(['still streaming']);
  });
});

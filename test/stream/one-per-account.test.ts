/**
 * One stream connection per account (asyncapi.yaml "Who may connect"): all keys of an account share one slot,
 * race-safe.
 */
import { describe, expect, it } from 'vitest';
import { stream } from '../../src/contract/index.js';
import { connect, connectAdmitted, waitFor, type TestClient, useStreamHarness } from './support.js';

const ctx = useStreamHarness();

const second = stream.closeCodes.secondConnection;
/** Connections an account may hold (x-stream `connectionsPerAccount`). */
const PER_ACCOUNT = stream.connectionsPerAccount;

describe(`${PER_ACCOUNT} connection(s) per account: one more is closed with 1008 while the first stays open`, () => {
  it('closes a connection of the same key past the per-account number and keeps the first one delivering', async () => {
    const { key } = await ctx.h.key('pro');
    const first = await connectAdmitted(ctx.h, { key });
    for (let i = 1; i < PER_ACCOUNT; i++) await connectAdmitted(ctx.h, { key });
    const again = connect(ctx.h.url, { key });
    expect(await again.closed).toEqual(second);
    expect(first.isOpen).toBe(true);
    await ctx.h.ingest([{ content: 'Still here' }]);
    expect((await first.received(1)).map((m) => m.content)).toEqual(['Still here']);
  });

  it(`shares the ${PER_ACCOUNT} slot(s) between all keys of an account`, async () => {
    const a = await ctx.h.key('max', 'acct_shared');
    const b = await ctx.h.key('max', 'acct_shared');
    const first = await connectAdmitted(ctx.h, { key: a.key });
    for (let i = 1; i < PER_ACCOUNT; i++) await connectAdmitted(ctx.h, { key: a.key });
    expect(await connect(ctx.h.url, { key: b.key }).closed).toEqual(second);
    expect(first.isOpen).toBe(true);
  });

  it('does not limit different accounts', async () => {
    const a = await ctx.h.key('pro');
    const b = await ctx.h.key('max');
    const ca = await connectAdmitted(ctx.h, { key: a.key });
    const cb = await connectAdmitted(ctx.h, { key: b.key });
    await ctx.h.ingest([{ content: 'Both see this' }]);
    expect((await ca.received(1))[0].content).toBe('Both see this');
    expect((await cb.received(1))[0].content).toBe('Both see this');
  });

  it('frees the slot when the connection closes: the account can connect again', async () => {
    const { key } = await ctx.h.key('pro');
    const first = await connectAdmitted(ctx.h, { key });
    first.ws.close(1000);
    await first.closed;
    await waitFor(() => ctx.h.slots.inUse() === 0, 'slot release');
    const next = await connectAdmitted(ctx.h, { key });
    expect(next.isOpen).toBe(true);
  });
});

describe(`${PER_ACCOUNT} connection(s) per account, race-safe: simultaneous connects for one account`, () => {
  it(`opens exactly ${PER_ACCOUNT} of 50 simultaneous connects (5 keys of the account, from 5 addresses) and closes ${50 - PER_ACCOUNT} with 1008`, async () => {
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push((await ctx.h.key('pro', 'acct_race')).key);
    const clients: TestClient[] = [];
    for (let i = 0; i < 50; i++) clients.push(connect(ctx.h.url, { key: keys[i % 5]!, ip: `127.0.3.${1 + (i % 5)}` }));
    await waitFor(() => clients.filter((c) => c.closeEvent).length >= 50 - PER_ACCOUNT, `${50 - PER_ACCOUNT} refusals`);
    const refused = clients.filter((c) => c.closeEvent);
    expect(refused.map((c) => c.closeEvent)).toEqual(Array(50 - PER_ACCOUNT).fill(second));
    const open = clients.filter((c) => !c.closeEvent);
    expect(open).toHaveLength(PER_ACCOUNT);
    expect(ctx.h.stream.connections()).toBe(PER_ACCOUNT);
    expect(ctx.h.slots.inUse()).toBe(PER_ACCOUNT);
    await ctx.h.ingest([{ content: 'Only the open ones get this' }]);
    for (const c of open) expect((await c.received(1)).map((m) => m.content)).toEqual(['Only the open ones get this']);
    expect(clients.reduce((n, c) => n + c.messages.length, 0)).toBe(PER_ACCOUNT);
  });
});

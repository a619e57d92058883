/**
 * Stream resume and ticker filter, one suite run unchanged against the mock and the real service, over
 * plain `ws` connections the way a partner's program connects (asyncapi.yaml "Resuming without a gap",
 * "Filtering by ticker", the close codes). The stress case: a 10,000-article burst read by a client that
 * drops its connection at random points and reconnects with `after=<last id>`: what it read, joined,
 * must be the burst exactly (no gap, no duplicate, same order).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { streamRules } from '../../generated/stream.js';
import { mockTarget, realTarget, rng, type Target } from './burst-targets.js';
import { until } from '../support/wait.js';

interface Session {
  ids: string[];
  close: { code: number; reason: string };
}

/**
 * One connection: reads until `stopAfter()` messages are in (then drops the connection, no close
 * handshake), until the server closes it, or until `timeoutMs` (dropped too).
 */
function session(url: string, stopAfter: () => number, onOpen?: () => void, timeoutMs = 20_000, ids: string[] = [], control: { drop?: () => void } = {}): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    let dropped = false;
    const drop = (): void => {
      dropped = true;
      ws.terminate();
    };
    const timer = setTimeout(drop, timeoutMs);
    control.drop = drop;
    ws.on('open', () => onOpen?.());
    ws.on('message', (data) => {
      if (dropped) return;
      ids.push((JSON.parse(data.toString()) as { id: string }).id);
      if (ids.length >= stopAfter()) drop();
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ ids, close: { code, reason: reason.toString() } });
    });
    ws.on('error', (e) => (dropped ? undefined : reject(e)));
  });
}

/** A session and a promise that resolves once it is open. */
function openSession(url: string, stopAfter: () => number): { opened: Promise<void>; done: Promise<Session>; ids: string[]; drop: () => void } {
  let opened!: () => void;
  const isOpen = new Promise<void>((r) => (opened = r));
  const ids: string[] = [];
  const control: { drop?: () => void } = {};
  const done = session(url, stopAfter, () => opened(), 20_000, ids, control);
  return { opened: isOpen, done, ids, drop: () => control.drop?.() };
}

const urlWith = (t: Target, key: string, q: Record<string, string>) => `${t.wsUrl}?${new URLSearchParams({ api_key: key, ...q })}`;

/**
 * Reads `total` articles after `anchor`, dropping the connection at random points and reconnecting
 * with `after=<last id read>`; a reconnect refused because the server has not yet seen the dropped
 * connection go (the one-connection rule) is retried.
 */
async function readWithDrops(t: Target, key: string, anchor: string, total: number, random: () => number, meanRun: number): Promise<{ ids: string[]; drops: number }> {
  const ids: string[] = [];
  let drops = 0;
  while (ids.length < total) {
    const run = 1 + Math.floor(random() * 2 * meanRun);
    const stop = Math.min(run, total - ids.length);
    const s = await session(urlWith(t, key, { after: ids.at(-1) ?? anchor }), () => stop);
    ids.push(...s.ids);
    if (s.close.code === streamRules.closeCodes.secondConnection.code && s.close.reason === streamRules.closeCodes.secondConnection.reason) {
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    if (s.close.code !== 1006) throw new Error(`closed by the server: ${s.close.code} ${s.close.reason}`);
    if (ids.length < total) drops++;
  }
  return { ids, drops };
}

for (const start of [mockTarget, realTarget]) {
  describe(`stream resume and tickers against the ${start === mockTarget ? 'mock' : 'real service'}`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await start();
    }, 60_000);
    afterAll(async () => {
      await t?.close();
    });

    describe('resume: after=<id> replays what was missed, in order, then continues live', () => {
      it('replays the articles after the id and then the new ones', async () => {
        const [anchor, ...missed] = await t.burst(6);
        const reading = openSession(urlWith(t, t.keys.pro, { after: anchor! }), () => missed.length + 3);
        await reading.opened;
        const live = await t.burst(3);
        const s = await reading.done;
        expect(s.close.code).toBe(1006); // dropped by the client once it had them all, not closed by the server
        expect(s.ids).toEqual([...missed, ...live]);
      });
    });

    describe('the same close codes as the contract for the new parameters', () => {
      it('refuses tickers with a pro key: "Ticker filtering requires the Max plan"', async () => {
        const s = await session(urlWith(t, t.keys.pro, { tickers: t.ticker }), () => 1);
        expect(s.close).toEqual(streamRules.closeCodes.tickersRequireMax);
      });
      it('refuses a malformed after and a malformed tickers: "Invalid stream parameter"', async () => {
        expect((await session(urlWith(t, t.keys.max, { after: 'not-an-id' }), () => 1)).close).toEqual(streamRules.closeCodes.invalidParameter);
        expect((await session(urlWith(t, t.keys.max, { tickers: 'nvda' }), () => 1)).close).toEqual(streamRules.closeCodes.invalidParameter);
      });
    });

    describe('tickers: a max key gets only the articles about the symbols, replayed and live', () => {
      it('replays and delivers exactly the matching articles', async () => {
        const [anchor, ...before] = await t.burst(13);
        const expected = before.filter(t.about(t.ticker));
        const reading = openSession(urlWith(t, t.keys.max, { after: anchor!, tickers: t.ticker }), () => Number.MAX_SAFE_INTEGER);
        await reading.opened;
        expected.push(...(await t.burst(24)).filter(t.about(t.ticker)));
        expect(expected.length).toBeGreaterThan(2);
        // Everything expected arrives; anything else (a non-matching article, a duplicate) would show in the exact comparison.
        await until(() => reading.ids.length >= expected.length, 'the matching articles');
        // Anything that should not come (a non-matching article, a duplicate) would come before articles
        // published after all of these (the stream keeps the order): publish some, wait for them.
        let after: string[] = [];
        for (let i = 0; i < 10 && after.length === 0; i++) after = (await t.burst(12)).filter(t.about(t.ticker));
        expect(after.length).toBeGreaterThan(0);
        expected.push(...after);
        await until(() => reading.ids.length >= expected.length, 'the matching articles published after them');
        reading.drop();
        expect((await reading.done).ids).toEqual(expected);
      });
    });

    describe('stress: a 10,000-article burst read with random drops and after= reconnects equals the burst exactly', () => {
      it('no gap, no duplicate, same order', async () => {
        const [anchor] = await t.burst(1);
        const total = 10_000;
        const producing = t.burst(total);
        const reading = readWithDrops(t, t.keys.max, anchor!, total, rng(start === mockTarget ? 12 : 34), 800);
        const [produced, read] = await Promise.all([producing, reading]);
        expect(read.drops).toBeGreaterThanOrEqual(5);
        expect(read.ids.length).toBe(produced.length);
        expect(read.ids).toEqual(produced);
      }, 30_000);
    });
  });
}

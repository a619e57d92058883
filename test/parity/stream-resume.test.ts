/**
 * Stream resume and ticker filter against the mock and the real service, over plain `ws` connections
 * the way a partner's program connects (asyncapi.yaml "Resuming without a gap", "Filtering by ticker").
 * Both run the same WebSocket adapter on the same delivery core (src/stream, src/delivery); what is per
 * target is the feed under it: the mock's in-memory feed of the sample articles (its pushes, its
 * history) and the service's store. The rules themselves (parameter close codes, the seam under
 * concurrent inserts, a 10,000-article burst read with random drops) are tested once, in test/stream
 * and test/delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockTarget, realTarget, type Target } from './burst-targets.js';
import { session, urlWith, type Session } from './resume-session.js';
import { until } from '../support/wait.js';

/** A session and a promise that resolves once it is open. */
function openSession(
  url: string,
  stopAfter: () => number,
): { opened: Promise<void>; done: Promise<Session>; ids: string[]; drop: () => void } {
  let opened!: () => void;
  const isOpen = new Promise<void>((r) => (opened = r));
  const ids: string[] = [];
  const control: { drop?: () => void } = {};
  const done = session(url, stopAfter, () => opened(), 20_000, ids, control);
  return { opened: isOpen, done, ids, drop: () => control.drop?.() };
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

    describe('tickers: a max key gets only the articles about the symbols, replayed and live', () => {
      it('replays and delivers exactly the matching articles', async () => {
        const [anchor, ...before] = await t.burst(13);
        const expected = before.filter(t.about(t.ticker));
        const reading = openSession(
          urlWith(t, t.keys.max, { after: anchor!, tickers: t.ticker }),
          () => Number.MAX_SAFE_INTEGER,
        );
        await reading.opened;
        expected.push(...(await t.burst(24)).filter(t.about(t.ticker)));
        expect(expected.length).toBeGreaterThan(2);
        // Everything expected arrives; anything else (a non-matching article, a duplicate) would show in the exact
        // comparison.
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
  });
}

/**
 * Resume under stress, on the real service (its store's feed): a 10,000-article burst read by a client
 * that drops its connection at random points and reconnects with `after=<last id>`; what it read,
 * joined, must be the burst exactly (no gap, no duplicate, same order). The mock runs the same adapter
 * and core over its in-memory feed (test/parity keeps what differs per target).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamRules } from '../../generated/stream.js';
import { realTarget, rng, type Target } from '../parity/burst-targets.js';
import { session, urlWith } from '../parity/resume-session.js';

/**
 * Reads `total` articles after `anchor`, dropping the connection at random points and reconnecting
 * with `after=<last id read>`; a reconnect refused because the server has not yet seen the dropped
 * connection go (the one-connection rule) is retried.
 */
async function readWithDrops(
  t: Target,
  key: string,
  anchor: string,
  total: number,
  random: () => number,
  meanRun: number,
): Promise<{ ids: string[]; drops: number }> {
  const ids: string[] = [];
  let drops = 0;
  while (ids.length < total) {
    const run = 1 + Math.floor(random() * 2 * meanRun);
    const stop = Math.min(run, total - ids.length);
    const s = await session(urlWith(t, key, { after: ids.at(-1) ?? anchor }), () => stop);
    ids.push(...s.ids);
    if (
      s.close.code === streamRules.closeCodes.secondConnection.code &&
      s.close.reason === streamRules.closeCodes.secondConnection.reason
    ) {
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    if (s.close.code !== 1006) throw new Error(`closed by the server: ${s.close.code} ${s.close.reason}`);
    if (ids.length < total) drops++;
  }
  return { ids, drops };
}

describe('stream resume under stress against the real service', () => {
  let t: Target;
  beforeAll(async () => {
    t = await realTarget();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('a 10,000-article burst read with random drops and after= reconnects equals the burst exactly: no gap, no duplicate, same order', async () => {
    const [anchor] = await t.burst(1);
    const total = 10_000;
    const producing = t.burst(total);
    const reading = readWithDrops(t, t.keys.max, anchor!, total, rng(34), 800);
    const [produced, read] = await Promise.all([producing, reading]);
    expect(read.drops).toBeGreaterThanOrEqual(5);
    expect(read.ids.length).toBe(produced.length);
    expect(read.ids).toEqual(produced);
  }, 30_000);
});

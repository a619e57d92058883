/**
 * The StatusStore behaviour (minutes run, samples per instance, automatic incidents one at a time per
 * component across processes, operators' notes, the published report's compare-and-set, prune), run
 * against every engine (status-sqlite.test.ts, status-postgres.test.ts). `open` gives a fresh, empty
 * store; `peer` a second, independent connection to the same data (another instance).
 */
import { expect } from 'vitest';
import { OpenedStores, registerStoreTests, type SuiteTest } from './suite-kit.js';
import type { Store } from '../../src/store/ports/index.js';

export interface StatusHarness {
  open(): Promise<Store>;
  peer(store: Store): Promise<Store>;
  cleanup(): Promise<void>;
  skip?: boolean;
}

const MINUTE = 60_000;
const DAY_MINUTES = 1440;
const T0 = Date.parse('2026-11-24T12:00:00.000Z');
/** T0's epoch minute and UTC day. */
const M0 = T0 / MINUTE;
const D0 = Math.floor(M0 / DAY_MINUTES);

export function describeStatusStore(name: string, h: StatusHarness): number {
  const groups = new Map<string, SuiteTest[]>();
  let count = 0;
  const test = (group: string, title: string, fn: () => Promise<void>) => {
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group)!.push([title, fn]);
    count++;
  };
  const opened = new OpenedStores();
  const open = async () => opened.track(await h.open());
  const peer = async (s: Store) => opened.track(await h.peer(s));

  test('minutes run', 'a minute marked twice, and by another instance, counts once', async () => {
    const s = await open();
    const other = await peer(s);
    await s.status.markMinute(M0);
    await s.status.markMinute(M0);
    await other.status.markMinute(M0);
    await other.status.markMinute(M0 + 1);
    expect(await s.status.minutesByDay(D0)).toEqual([{ day: D0, minutes: 2 }]);
    expect(await other.status.minutesByDay(D0)).toEqual([{ day: D0, minutes: 2 }]);
  });

  test(
    'minutes run',
    'minutesByDay counts per UTC day from sinceDay on, by day; days with none are absent',
    async () => {
      const s = await open();
      const midnight = (D0 + 1) * DAY_MINUTES;
      // The last minute of a day and the first of the next fall on either side of UTC midnight.
      for (const m of [midnight - 2, midnight - 1, midnight, midnight + 5, midnight + 3 * DAY_MINUTES])
        await s.status.markMinute(m);
      await s.status.markMinute((D0 - 3) * DAY_MINUTES);
      expect(await s.status.minutesByDay(D0 - 1)).toEqual([
        { day: D0, minutes: 2 },
        { day: D0 + 1, minutes: 2 },
        { day: D0 + 4, minutes: 1 },
      ]);
      expect(await s.status.minutesByDay(D0 - 3)).toHaveLength(4);
      expect(await s.status.minutesByDay(D0 + 5)).toEqual([]);
    },
  );

  test('samples', 'putSample replaces what the same instance put for the same minute', async () => {
    const s = await open();
    await s.status.putSample('i-a', M0, '{"rest":1}');
    await s.status.putSample('i-a', M0, '{"rest":2}');
    await s.status.putSample('i-b', M0, '{"rest":3}');
    expect(await s.status.samples(M0)).toEqual([
      { instance: 'i-a', minute: M0, sample: '{"rest":2}' },
      { instance: 'i-b', minute: M0, sample: '{"rest":3}' },
    ]);
  });

  test('samples', "samples answers every instance's from sinceMinute on, by minute", async () => {
    const s = await open();
    const other = await peer(s);
    await s.status.putSample('i-a', M0 + 2, 'a2');
    await other.status.putSample('i-b', M0 + 1, 'b1');
    await s.status.putSample('i-a', M0, 'a0');
    await s.status.putSample('i-a', M0 - 1, 'old');
    expect(await s.status.samples(M0)).toEqual([
      { instance: 'i-a', minute: M0, sample: 'a0' },
      { instance: 'i-b', minute: M0 + 1, sample: 'b1' },
      { instance: 'i-a', minute: M0 + 2, sample: 'a2' },
    ]);
    expect(await s.status.samples(M0 + 3)).toEqual([]);
  });

  test('automatic incidents', 'open is idempotent while the incident is open; close ends it', async () => {
    const s = await open();
    expect(await s.status.open('rest', 'server_errors', T0)).toBe(true);
    expect(await s.status.open('rest', 'database_unavailable', T0 + 1000)).toBe(false);
    // Another component has its own.
    expect(await s.status.open('source:wire-a', 'source_unreachable', T0 + 2000)).toBe(true);
    expect(await s.status.incidents(T0)).toMatchObject([
      { component: 'source:wire-a', kind: 'automatic', cause: 'source_unreachable', startedAt: T0 + 2000 },
      { component: 'rest', kind: 'automatic', cause: 'server_errors', message: null, startedAt: T0, endedAt: null },
    ]);
    expect(await s.status.close('rest', T0 + 5000)).toBe(true);
    expect(await s.status.close('rest', T0 + 6000)).toBe(false);
    expect(await s.status.close('stream', T0 + 6000)).toBe(false);
    const rest = (await s.status.incidents(T0)).filter((i) => i.component === 'rest');
    expect(rest).toMatchObject([{ startedAt: T0, endedAt: T0 + 5000 }]);
  });

  test('automatic incidents', 'after a close, open opens a new incident', async () => {
    const s = await open();
    await s.status.open('search', 'index_loading', T0);
    await s.status.close('search', T0 + 1000);
    expect(await s.status.open('search', 'embedder_unavailable', T0 + 2000)).toBe(true);
    const list = await s.status.incidents(T0);
    expect(list).toMatchObject([
      { component: 'search', cause: 'embedder_unavailable', startedAt: T0 + 2000, endedAt: null },
      { component: 'search', cause: 'index_loading', startedAt: T0, endedAt: T0 + 1000 },
    ]);
    expect(list[0]!.id).not.toBe(list[1]!.id);
  });

  test('automatic incidents', 'two instances opening one at once: exactly one opens it', async () => {
    const s = await open();
    const other = await peer(s);
    for (const component of ['rest', 'stream', 'webhooks', 'search', 'source:wire-a']) {
      const opened = await Promise.all([
        s.status.open(component, 'server_errors', T0),
        other.status.open(component, 'server_errors', T0),
      ]);
      expect(opened.filter(Boolean)).toHaveLength(1);
    }
    const stillOpen = (await s.status.incidents(T0)).filter((i) => i.endedAt === null);
    expect(stillOpen).toHaveLength(5);
  });

  test('notes', "note adds an operator's note, open until resolved; close leaves notes alone", async () => {
    const s = await open();
    const n = await s.status.note('service', 'Planned maintenance at 14:00 UTC', T0);
    expect(n).toEqual({
      id: expect.any(Number),
      component: 'service',
      kind: 'note',
      cause: 'operator_note',
      message: 'Planned maintenance at 14:00 UTC',
      startedAt: T0,
      endedAt: null,
    });
    expect(await s.status.close('service', T0 + 1000)).toBe(false);
    // A note does not count as the component's automatic incident.
    expect(await s.status.open('service', 'database_unavailable', T0 + 1000)).toBe(true);
    expect(await s.status.incidents(T0)).toContainEqual(n);
  });

  test('notes', 'resolve with an id ends that note only; the notes ended are answered', async () => {
    const s = await open();
    const a = await s.status.note('rest', 'first', T0);
    const b = await s.status.note('stream', 'second', T0 + 1000);
    expect(await s.status.resolve(T0 + 2000, a.id)).toEqual([{ ...a, endedAt: T0 + 2000 }]);
    expect(await s.status.resolve(T0 + 3000, a.id)).toEqual([]);
    expect(await s.status.resolve(T0 + 3000, b.id + 1000)).toEqual([]);
    const list = await s.status.incidents(T0);
    expect(list).toEqual([b, { ...a, endedAt: T0 + 2000 }]);
  });

  test('notes', 'resolve without an id ends every open note, not automatic incidents', async () => {
    const s = await open();
    const other = await peer(s);
    const a = await s.status.note('rest', 'first', T0);
    const b = await other.status.note('service', 'second', T0 + 1000);
    await s.status.open('rest', 'server_errors', T0 + 500);
    const ended = await other.status.resolve(T0 + 2000);
    expect(ended).toHaveLength(2);
    expect(ended).toEqual(
      expect.arrayContaining([
        { ...a, endedAt: T0 + 2000 },
        { ...b, endedAt: T0 + 2000 },
      ]),
    );
    expect(await s.status.resolve(T0 + 3000)).toEqual([]);
    expect((await s.status.incidents(T0)).filter((i) => i.endedAt === null)).toMatchObject([
      { component: 'rest', kind: 'automatic' },
    ]);
  });

  test('incidents', 'newest start first; on the same start, the higher id first', async () => {
    const s = await open();
    const first = await s.status.note('rest', 'one', T0);
    const second = await s.status.note('rest', 'two', T0);
    await s.status.open('stream', 'slow_delivery', T0 + 1000);
    const older = await s.status.note('search', 'older', T0 - 1000);
    expect(second.id).toBeGreaterThan(first.id);
    const list = await s.status.incidents(0);
    expect(list.map((i) => i.message ?? i.component)).toEqual(['stream', 'two', 'one', 'older']);
    expect(list[3]).toEqual(older);
  });

  test('incidents', 'incidents answers the open ones and those ended at or after sinceMs', async () => {
    const s = await open();
    await s.status.open('rest', 'server_errors', T0 - 10 * MINUTE);
    await s.status.close('rest', T0 - 5 * MINUTE);
    await s.status.open('stream', 'slow_delivery', T0 - 20 * MINUTE);
    await s.status.close('stream', T0);
    await s.status.open('search', 'index_loading', T0 - 60 * MINUTE);
    const components = async (since: number) => (await s.status.incidents(since)).map((i) => i.component);
    expect(await components(T0 - 5 * MINUTE)).toEqual(['rest', 'stream', 'search']);
    expect(await components(T0 - 5 * MINUTE + 1)).toEqual(['stream', 'search']);
    expect(await components(T0 + 1)).toEqual(['search']);
  });

  test(
    'report',
    'none at first; publish with no previous writes it once: a second one finds it and loses',
    async () => {
      const s = await open();
      const other = await peer(s);
      expect(await s.status.report()).toBeUndefined();
      expect(await s.status.publish('{"v":1}', T0, null)).toBe(true);
      expect(await other.status.publish('{"v":"other"}', T0 + 1, null)).toBe(false);
      expect(await other.status.report()).toEqual({ generatedAt: T0, body: '{"v":1}' });
    },
  );

  test('report', 'publish replaces the report generated at previous; a stale previous loses', async () => {
    const s = await open();
    const other = await peer(s);
    await s.status.publish('{"v":1}', T0, null);
    expect(await s.status.publish('{"v":2}', T0 + MINUTE, T0)).toBe(true);
    // The other instance built on the report of T0, replaced meanwhile.
    expect(await other.status.publish('{"v":"late"}', T0 + MINUTE + 1, T0)).toBe(false);
    expect(await other.status.report()).toEqual({ generatedAt: T0 + MINUTE, body: '{"v":2}' });
    expect(await other.status.publish('{"v":3}', T0 + 2 * MINUTE, T0 + MINUTE)).toBe(true);
    expect(await s.status.report()).toEqual({ generatedAt: T0 + 2 * MINUTE, body: '{"v":3}' });
    // With none stored, a previous time names nothing: it loses too.
    const fresh = await open();
    expect(await fresh.status.publish('{"v":1}', T0, T0 - MINUTE)).toBe(false);
    expect(await fresh.status.report()).toBeUndefined();
  });

  test(
    'prune',
    'drops minutes and ended incidents older than beforeMs, samples older than samplesBeforeMs; open ones stay',
    async () => {
      const s = await open();
      const cut = T0 + 30 * 1000;
      // Minute M0 starts before the cut, M0 + 1 after it.
      for (const m of [M0 - DAY_MINUTES, M0, M0 + 1]) {
        await s.status.markMinute(m);
        await s.status.putSample('i-a', m, `s${m}`);
      }
      await s.status.open('rest', 'server_errors', T0 - DAY_MINUTES * MINUTE);
      await s.status.close('rest', cut - 1);
      await s.status.open('stream', 'slow_delivery', T0 - DAY_MINUTES * MINUTE);
      await s.status.close('stream', cut);
      await s.status.open('search', 'index_loading', T0 - DAY_MINUTES * MINUTE);
      await s.status.note('service', 'still open', T0 - DAY_MINUTES * MINUTE);
      await s.status.prune(cut, (M0 - 10) * MINUTE);
      expect(await s.status.minutesByDay(0)).toEqual([{ day: Math.floor((M0 + 1) / DAY_MINUTES), minutes: 1 }]);
      expect((await s.status.samples(0)).map((r) => r.minute)).toEqual([M0, M0 + 1]);
      await s.status.prune(cut, cut);
      expect((await s.status.samples(0)).map((r) => r.minute)).toEqual([M0 + 1]);
      expect((await s.status.incidents(0)).map((i) => i.component).sort()).toEqual(['search', 'service', 'stream']);
    },
  );

  for (const [group, tests] of groups)
    registerStoreTests(`status (${name}): ${group}`, tests, h, () => opened.closeAll(), { timeout: 60_000 });
  return count;
}

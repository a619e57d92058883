/** `fns status note | resolve | show`: the operators' side of the public status page. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { expectCleanFailure, fnsWith, tempDataDir } from './support.js';

describe('fns status: notes on the status page', () => {
  const data = tempDataDir('fns-status-');
  afterAll(() => data.remove());
  const fns = (...args: string[]) => fnsWith({ dataDir: data.dir }, 'status', ...args);

  it('adds a note about the whole service by default, and ends it by id', async () => {
    const added = await fns('note', 'Harbor Wire is late today; we are on it', '--json');
    expect(added.code).toBe(0);
    const note = JSON.parse(added.stdout);
    expect(note).toMatchObject({ component: 'service', kind: 'note', ended_at: null });
    expect(note.id).toMatch(/^inc_\d+$/);
    const resolved = await fns('resolve', note.id, '--json');
    expect(resolved.code).toBe(0);
    expect(JSON.parse(resolved.stdout)).toEqual([
      expect.objectContaining({ id: note.id, ended_at: expect.any(String) }),
    ]);
    expectCleanFailure(await fns('resolve', note.id), 1, `no open note ${note.id} (fns status show lists them)`);
  });

  it('resolves every open note without an id', async () => {
    await fns('note', 'one');
    await fns('note', 'two', '--component', 'stream');
    const r = await fns('resolve');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^resolved inc_\d+, inc_\d+$/m);
    expect((await fns('resolve')).stdout).toContain('no open note to resolve');
  });

  it('refuses an empty note, a control character, an unknown component or a malformed id as usage errors', async () => {
    expectCleanFailure(await fns('note', '  '), 2, '<message> must not be empty');
    expectCleanFailure(await fns('note', 'a\u001b[2Jb'), 2, '<message> must be one line without control characters');
    expectCleanFailure(await fns('note', 'x', '--component', 'source:nope'), 2, /--component must be one of/);
    expectCleanFailure(await fns('note', 'x'.repeat(501)), 2, '<message> is longer than 500 characters');
    expectCleanFailure(await fns('resolve', '12'), 2, /<id> must be an incident id such as inc_12/);
  });

  it('refuses C1 controls (NEL, CSI) and the line and paragraph separators: a note is one line', async () => {
    for (const c of ['\u0085', '\u009b', '\u2028', '\u2029'])
      expectCleanFailure(await fns('note', `a${c}b`), 2, '<message> must be one line without control characters');
    expect((await fns('note', 'Señal ‘ok’ — 5€', '--json')).code).toBe(0);
  });

  it('checks the message and the id before it opens the store (a DATA_DIR that cannot be opened)', async () => {
    const file = join(data.dir, 'a-file');
    writeFileSync(file, '');
    const broken = (...args: string[]) => fnsWith({ dataDir: join(file, 'data') }, 'status', ...args);
    expectCleanFailure(await broken('note', '  '), 2, '<message> must not be empty');
    expectCleanFailure(await broken('resolve', '12'), 2, /<id> must be an incident id such as inc_12/);
  });

  it('shows the report the instances serve, or says there is none yet', async () => {
    expectCleanFailure(await fns('show'), 1, /no status report yet/);
    const store = new SqliteStore(join(data.dir, 'fns.sqlite'));
    const report = {
      state: 'degraded',
      generated_at: '2026-11-27T09:30:05.000Z',
      components: [{ id: 'rest', name: 'REST API', state: 'operational', cause: null }],
      sources: [{ name: 'harbor-wire', state: 'degraded', cause: 'source_unreachable' }],
      incidents: [
        {
          id: 'inc_7',
          component: 'source:harbor-wire',
          kind: 'automatic',
          started_at: '2026-11-27T09:22:31.000Z',
          ended_at: null,
          message: null,
        },
      ],
    };
    await store.status.publish(JSON.stringify(report), Date.now() - 120_000, null);
    await store.close();
    const shown = await fns('show');
    expect(shown.code).toBe(0);
    // Generated long before now: no instance refreshes it.
    expect(shown.stdout).toMatch(
      /^degraded \(generated 2026-11-27T09:30:05\.000Z, \d+ s ago; no instance has refreshed it for \d+ s: is the service running\?\)$/m,
    );
    expect(shown.stdout).toContain('source harbor-wire: degraded (source_unreachable)');
    expect(shown.stdout).toContain('inc_7 source:harbor-wire automatic since 2026-11-27T09:22:31.000Z');
    expect(JSON.parse((await fns('show', '--json')).stdout)).toEqual(report);
  });
});

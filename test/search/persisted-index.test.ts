/**
 * The approximate index is saved beside the store; a start loads it and adds only the newer
 * vectors; a corrupt or stale file is rebuilt in the background while the exact scan serves.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SemanticIndex, type SemanticIndexOptions } from '../../src/indexing/index.js';
import { snapshotPaths } from '../../src/indexing/persist.js';
import type { Embedder } from '../../src/search/index.js';
import { HnswIndex } from '../../src/search/ann.js';
import { asIndexStore, clusteredUnitVectors, idOf, MatrixVectorStore } from './corpus.js';
import { recordLog } from '../support/log.js';

const dim = 32;
const n = 1_200;
const extra = 40;
// Rows 0..n-1 stored at first; n..n+extra-1 stored "later" (store.visible raised).
const data = clusteredUnitVectors(n + extra, dim, 31, 40);

/** The query "r17" is row 17's own vector: its article must come first. */
const embedder: Embedder = {
  modelId: 'm',
  embed: async ([t]) => [data.slice(Number(t!.slice(1)) * dim, (Number(t!.slice(1)) + 1) * dim)],
};

let dir: string;
const logs: string[] = [];
const opened: SemanticIndex[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fns-persist-'));
  logs.length = 0;
});
afterEach(async () => {
  for (const i of opened.splice(0)) await i.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(store: MatrixVectorStore, over: SemanticIndexOptions = {}): SemanticIndex {
  const index = new SemanticIndex(asIndexStore(store), embedder, {
    annThreshold: 500,
    persistDir: dir,
    log: recordLog(logs),
    ...over,
  });
  opened.push(index);
  return index;
}

/** A first service run: loads, builds the graph in the background, saves it. */
async function firstRun(): Promise<MatrixVectorStore> {
  const store = new MatrixVectorStore('m', data, dim);
  store.visible = n;
  const index = open(store);
  await index.start();
  await index.settled();
  expect(index.status()).toMatchObject({ mode: 'approximate', vectors: n });
  expect(logs.some((m) => /approximate index saved \{"vectors":1200,"rowid":1200,/.test(m))).toBe(true);
  logs.length = 0;
  return store;
}

describe('a start loads the saved approximate index instead of rebuilding it', () => {
  it('ready in approximate mode at once, with no graph build, and the same answers', async () => {
    const store = await firstRun();
    const again = open(store);
    await again.start();
    // Approximate from the moment it is ready: nothing was built.
    expect(again.status()).toMatchObject({ state: 'ready', mode: 'approximate', vectors: n });
    expect(logs.some((m) => /saved approximate index loaded; adding newer vectors \{"vectors":1200,/.test(m))).toBe(
      true,
    );
    expect(logs.some((m) => /switched to the approximate index/.test(m))).toBe(false);
    for (const r of [0, 17, 599, n - 1]) expect((await again.search(`r${r}`, 1))[0]!.id).toBe(idOf(r));
  });
});

describe('a start adds only the vectors stored after the saved ones', () => {
  it('loads the newer vectors from the store into the loaded graph; they are found', async () => {
    const store = await firstRun();
    store.visible = n + extra;
    const calls = store.calls;
    const again = open(store);
    await again.start();
    expect(again.status()).toMatchObject({ state: 'ready', mode: 'approximate', vectors: n + extra });
    // One check of the saved rowid and one page of newer vectors (the page is smaller than a full one): not the archive
    // again.
    expect(store.calls - calls).toBeLessThanOrEqual(3);
    expect((await again.search(`r${n + 5}`, 1))[0]!.id).toBe(idOf(n + 5));
    // Saved at shutdown with the newer vectors: the next start needs no page of them.
    await again.close();
    logs.length = 0;
    const third = open(store);
    await third.start();
    expect(
      logs.some((m) =>
        new RegExp(`saved approximate index loaded; adding newer vectors \\{"vectors":${n + extra},`).test(m),
      ),
    ).toBe(true);
  });
});

describe('a corrupt or stale saved index is rebuilt in the background while the exact scan serves', () => {
  it.each([
    [
      'the index file altered (same size)',
      () => {
        const p = snapshotPaths(dir, 'm').index;
        const b = readFileSync(p);
        for (let i = 64; i < b.length; i += 97) b[i]! ^= 0xff;
        writeFileSync(p, b);
      },
    ],
    [
      'the index file truncated',
      () => {
        const p = snapshotPaths(dir, 'm').index;
        writeFileSync(p, readFileSync(p).subarray(0, statSync(p).size >> 1));
      },
    ],
    ['the manifest unreadable', () => writeFileSync(snapshotPaths(dir, 'm').manifest, '{not json')],
  ])('%s', async (_what, damage) => {
    const store = await firstRun();
    damage();
    const again = open(store);
    await again.start();
    // Ready at once, answering from the exact scan; the graph is rebuilt behind it, then saved again.
    expect(again.status()).toMatchObject({ state: 'ready', mode: 'exact', vectors: n });
    expect(logs.some((m) => /saved approximate index not used/.test(m))).toBe(true);
    expect((await again.search('r17', 1))[0]!.id).toBe(idOf(17));
    await again.settled();
    expect(again.status().mode).toBe('approximate');
    logs.length = 0;
    const third = open(store);
    await third.start();
    expect(third.status().mode).toBe('approximate');
    expect(logs.some((m) => /saved approximate index loaded/.test(m))).toBe(true);
  });

  it('a graph usearch refuses to load (another version of its format) is rebuilt, not retried as a store failure', async () => {
    const store = await firstRun();
    const refused = vi.spyOn(HnswIndex, 'load').mockRejectedValueOnce(new Error('incompatible file version'));
    try {
      const again = open(store);
      await again.start();
      expect(again.status()).toMatchObject({ state: 'ready', mode: 'exact', vectors: n });
      expect(logs.some((m) => /saved approximate index not used.*incompatible file version/.test(m))).toBe(true);
      await again.settled();
      expect(again.status().mode).toBe('approximate');
    } finally {
      refused.mockRestore();
    }
  });

  it('a file of another database (the vector under its last rowid differs) is not used', async () => {
    await firstRun();
    // Another archive: same model, different articles at those rowids.
    const other = new MatrixVectorStore('m', clusteredUnitVectors(n, dim, 99, 40), dim);
    (other as unknown as { vectorsAfter: MatrixVectorStore['vectorsAfter'] }).vectorsAfter = async (
      model,
      after,
      limit,
    ) =>
      (await MatrixVectorStore.prototype.vectorsAfter.call(other, model, after, limit)).map((v) => ({
        ...v,
        id: `X${v.id}`,
      }));
    const again = open(other);
    await again.start();
    expect(again.status()).toMatchObject({ mode: 'exact', vectors: n });
    expect(logs.some((m) => /stale/.test(m))).toBe(true);
  });

  it('a file of another model is not used', async () => {
    await firstRun();
    const p = snapshotPaths(dir, 'm');
    const other: Embedder = { modelId: 'm2', embed: embedder.embed };
    writeFileSync(snapshotPaths(dir, 'm2').manifest, readFileSync(p.manifest));
    writeFileSync(snapshotPaths(dir, 'm2').index, readFileSync(p.index));
    writeFileSync(snapshotPaths(dir, 'm2').ids, readFileSync(p.ids));
    const store = new MatrixVectorStore('m2', data, dim);
    store.visible = n;
    const index = new SemanticIndex(asIndexStore(store), other, {
      annThreshold: 500,
      persistDir: dir,
      log: recordLog(logs),
    });
    opened.push(index);
    await index.start();
    expect(index.status().mode).toBe('exact');
    expect(logs.some((m) => /saved for model m, not m2/.test(m))).toBe(true);
  });
});

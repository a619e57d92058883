/**
 * The approximate index on disk (files: docs/search.md), so a start need not rebuild the graph. The manifest is
 * written last: a crash leaves one that does not match the files. Reading checks sizes and CRC-32 before usearch
 * sees a byte (a truncated file aborts the process); any mismatch is a {@link SnapshotUnusable}: rebuild.
 */
import { createReadStream, mkdirSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';

const SNAPSHOT_FORMAT = 1;

/** A file's size and CRC-32, as the manifest records them. */
type FileSum = { bytes: number; crc32: number };

export interface SnapshotManifest {
  format: number;
  modelId: string;
  dim: number;
  rows: number;
  /** The last vector rowid the snapshot holds: a start loads `vectorsAfter(model, lastRowid)` on top. */
  lastRowid: number;
  /** The article id stored under `lastRowid`: checked against the store (the file is of this database). */
  lastId: string;
  /** HNSW settings the graph was built with. */
  hnsw: { connectivity: number; expansionAdd: number; expansionSearch: number };
  savedAt: string;
  files: { index: FileSum; ids: FileSum };
}

/** The snapshot cannot be used (missing, another model, corrupt, stale): rebuild. */
export class SnapshotUnusable extends Error {
  override name = 'SnapshotUnusable';
}

export interface SnapshotPaths {
  index: string;
  ids: string;
  manifest: string;
}

/** File names of one model's snapshot in `dir` (the model id made safe for a file name). */
export function snapshotPaths(dir: string, modelId: string): SnapshotPaths {
  const base = join(dir, modelId.toLowerCase().replace(/[^a-z0-9._-]+/g, '-'));
  return { index: `${base}.usearch`, ids: `${base}.ids`, manifest: `${base}.json` };
}

/** CRC-32 of a file, read in chunks (the event loop runs between them). */
async function fileCrc32(path: string): Promise<FileSum> {
  let crc = 0;
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 8 << 20 })) {
    crc = crc32(chunk as Buffer, crc);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, crc32: crc };
}

/** Writes a snapshot; `saveIndex` writes the graph synchronously, at the moment `ids` and `manifest` describe. */
export async function writeSnapshot(
  paths: SnapshotPaths,
  saveIndex: (path: string) => void,
  ids: string,
  manifest: Omit<SnapshotManifest, 'files' | 'format' | 'savedAt'>,
): Promise<void> {
  // Synchronous up to the graph's write: no refresh can add rows after the caller captured ids and cursor.
  mkdirSync(dirname(paths.manifest), { recursive: true });
  const tmp = `.tmp-${process.pid}-${Date.now()}`;
  saveIndex(paths.index + tmp);
  try {
    await writeFile(paths.ids + tmp, ids);
    const files = { index: await fileCrc32(paths.index + tmp), ids: await fileCrc32(paths.ids + tmp) };
    // The old manifest goes first: between the renames, no manifest matches the files.
    await rm(paths.manifest, { force: true });
    await rename(paths.index + tmp, paths.index);
    await rename(paths.ids + tmp, paths.ids);
    const full: SnapshotManifest = { format: SNAPSHOT_FORMAT, ...manifest, savedAt: new Date().toISOString(), files };
    await writeFile(paths.manifest + tmp, JSON.stringify(full, null, 1));
    await rename(paths.manifest + tmp, paths.manifest);
  } finally {
    for (const path of [paths.index, paths.ids, paths.manifest]) await rm(path + tmp, { force: true });
  }
}

/**
 * The manifest and ids of a whole snapshot of `modelId` (the index file is checked, not read); else SnapshotUnusable.
 */
export async function readSnapshot(
  paths: SnapshotPaths,
  modelId: string,
): Promise<{ manifest: SnapshotManifest; ids: string[] }> {
  let manifest: SnapshotManifest;
  try {
    manifest = JSON.parse(await readFile(paths.manifest, 'utf8')) as SnapshotManifest;
  } catch (e) {
    throw new SnapshotUnusable(
      (e as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'no saved index'
        : `unreadable manifest (${(e as Error).message})`,
    );
  }
  if (manifest.format !== SNAPSHOT_FORMAT)
    throw new SnapshotUnusable(`format ${manifest.format}, expected ${SNAPSHOT_FORMAT}`);
  if (manifest.modelId !== modelId) throw new SnapshotUnusable(`saved for model ${manifest.modelId}, not ${modelId}`);
  for (const name of ['index', 'ids'] as const) {
    const path = paths[name];
    const want = manifest.files?.[name];
    const size = await stat(path).then(
      (s) => s.size,
      () => -1,
    );
    if (!want || size !== want.bytes)
      throw new SnapshotUnusable(`${name} file has ${size} bytes, the manifest says ${want?.bytes}`);
    const got = await fileCrc32(path);
    if (got.crc32 !== want.crc32)
      throw new SnapshotUnusable(`${name} file checksum differs from the manifest (corrupt)`);
  }
  const text = await readFile(paths.ids, 'utf8');
  const ids = text.length === 0 ? [] : text.split('\n');
  if (ids.length !== manifest.rows)
    throw new SnapshotUnusable(`${ids.length} ids, the manifest says ${manifest.rows} rows`);
  return { manifest, ids };
}

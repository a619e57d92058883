/**
 * The approximate index saved under `persistDir` (./persist.ts): restored at start when whole, of this model and
 * this database, else rebuilt; saved after a build, when enough is new, and at shutdown. Unset: no file is touched.
 */
import { errorText, type Log } from '../domain/log.js';
import { DEFAULT_HNSW, HnswIndex } from '../search/ann.js';
import type { StorePorts } from '../store/ports/index.js';
import { readSnapshot, snapshotPaths, SnapshotUnusable, writeSnapshot } from './persist.js';
import type { FeedCursor, VectorFeed } from './vector-feed.js';
import type { VectorIndex } from './vector-index.js';

/**
 * How often a running service looks whether enough is new to save: {@link SAVE_MIN_NEW_VECTORS}, or 5% of the index.
 */
const SAVE_EVERY_MS = 15 * 60_000;
const SAVE_MIN_NEW_VECTORS = 10_000;

export interface SavedIndexOptions {
  /** Where the approximate index is saved, e.g. DATA_DIR/search-index. Unset: never saved (tests, tools). */
  persistDir?: string;
  log?: Log;
}

export class SavedIndex {
  /** The feed's rowid at the last save or restore (nothing new to save when equal). */
  private savedRowid = -1;
  /** Vectors in the index at the last save or restore. */
  private savedRows = 0;
  private saving: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<StorePorts['vectors'], 'vectorsAfter'>,
    private readonly modelId: string,
    private readonly index: VectorIndex,
    private readonly feed: VectorFeed,
    private readonly options: SavedIndexOptions = {},
  ) {}

  /** Resolves when no save is under way. */
  get pending(): Promise<void> | undefined {
    return this.saving;
  }

  /** Saves the approximate index if there is one with new vectors; one at a time, never mid-refresh. Never rejects. */
  save(): Promise<void> {
    this.saving ??= this.write().finally(() => (this.saving = undefined));
    return this.saving;
  }

  /**
   * Every `saveEveryMs`, saves when enough is new: not on every change, as a save holds the event loop while usearch
   * writes.
   */
  saveNowAndThen(): void {
    if (!this.options.persistDir) return;
    this.timer = setInterval(() => {
      const size = this.index.size;
      if (size - this.savedRows >= Math.max(SAVE_MIN_NEW_VECTORS, size * 0.05)) void this.save();
    }, SAVE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async write(): Promise<void> {
    const dir = this.options.persistDir;
    while (this.feed.pending) await this.feed.pending.catch(() => {});
    const approximate = this.index.approximate();
    const cursor = this.feed.cursor;
    if (!dir || !approximate || cursor.rowid === this.savedRowid) return;
    const started = performance.now();
    // From here to the index write, no await: the graph, the ids and the cursor describe one moment.
    const { hnsw, ids } = approximate;
    const rows = ids.length;
    try {
      await writeSnapshot(snapshotPaths(dir, this.modelId), (path) => hnsw.save(path), ids.join('\n'), {
        modelId: this.modelId,
        dim: hnsw.dim,
        rows,
        lastRowid: cursor.rowid,
        lastId: cursor.id,
        hnsw: DEFAULT_HNSW,
      });
      this.savedRowid = cursor.rowid;
      this.savedRows = rows;
      this.options.log?.info(
        { vectors: this.index.size, rowid: cursor.rowid, ms: Math.round(performance.now() - started) },
        'approximate index saved',
      );
    } catch (e) {
      this.options.log?.warn(
        { err: errorText(e) },
        'saving the approximate index failed; it is rebuilt at the next start',
      );
    }
  }

  /**
   * Restores the saved index into the empty index and moves the feed past it; false (logged) when there is none
   * or it is unusable (the caller loads from the store). A store failure is thrown: the caller retries.
   */
  async restore(): Promise<boolean> {
    const dir = this.options.persistDir;
    if (!dir) return false;
    const started = performance.now();
    try {
      const { hnsw, ids, cursor } = await this.read(dir);
      this.index.restore(hnsw, ids);
      this.feed.resumeAt(cursor);
      this.savedRowid = cursor.rowid;
      this.savedRows = ids.length;
      this.options.log?.info(
        { vectors: ids.length, rowid: cursor.rowid, ms: Math.round(performance.now() - started) },
        'saved approximate index loaded; adding newer vectors',
      );
      return true;
    } catch (e) {
      if (!(e instanceof SnapshotUnusable)) throw e;
      this.options.log?.warn(
        { err: e.message },
        'saved approximate index not used; loading from the store, approximate index rebuilt in the background',
      );
      return false;
    }
  }

  /** The saved graph, its ids and the cursor it covers; SnapshotUnusable when it cannot be used. */
  private async read(dir: string): Promise<{ hnsw: HnswIndex; ids: string[]; cursor: FeedCursor }> {
    const paths = snapshotPaths(dir, this.modelId);
    const { manifest, ids } = await readSnapshot(paths, this.modelId);
    if (manifest.rows > 0) {
      const [at] = await this.store.vectorsAfter(this.modelId, manifest.lastRowid - 1, 1);
      if (!at || at.rowid !== manifest.lastRowid || at.id !== manifest.lastId) {
        throw new SnapshotUnusable(
          `stale: the store's vector at rowid ${manifest.lastRowid} is not the saved one (another database, or replaced since)`,
        );
      }
    }
    // A graph usearch refuses (another version's format) is rebuilt like a damaged one, not retried as a store fault.
    const hnsw = await HnswIndex.load(paths.index, manifest.dim, manifest.hnsw).catch((e: unknown) =>
      e instanceof Error ? e : new Error(String(e)),
    );
    if (hnsw instanceof Error) throw new SnapshotUnusable(`the approximate index cannot load here (${hnsw.message})`);
    return { hnsw, ids, cursor: { rowid: manifest.lastRowid, id: manifest.lastId } };
  }
}

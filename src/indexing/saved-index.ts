/**
 * The approximate index kept beside the store under `persistDir` (file format: ./persist.ts). A start
 * restores it when it is whole, of this model and of this database, and the feed adds only newer
 * vectors; otherwise the index is loaded from the store and the graph rebuilt. A running service saves
 * it after a build, when enough is new, and at shutdown. Without `persistDir` nothing is read or written.
 */
import { errorText, type Log } from '../domain/log.js';
import { DEFAULT_HNSW, HnswIndex, type HnswOptions } from '../search/ann.js';
import type { StorePorts } from '../store/ports/index.js';
import { readSnapshot, snapshotPaths, SnapshotUnusable, writeSnapshot } from './persist.js';
import type { FeedCursor, VectorFeed } from './vector-feed.js';
import type { VectorIndex } from './vector-index.js';

/**
 * A running service looks every 15 minutes whether to save the approximate index: when at least
 * {@link SAVE_MIN_NEW_VECTORS} (or 5% of the index) were added since the last save. Also saved after a
 * build and at shutdown.
 */
const DEFAULT_SAVE_EVERY_MS = 15 * 60_000;
const SAVE_MIN_NEW_VECTORS = 10_000;

export interface SavedIndexOptions {
  /** Where the approximate index is saved, e.g. DATA_DIR/search-index. Unset: never saved. */
  persistDir?: string;
  /** While running, how often to look whether enough is new to save (default {@link DEFAULT_SAVE_EVERY_MS}). */
  saveEveryMs?: number;
  /** HNSW settings for a new graph (a restored one keeps those it was built with). */
  hnsw?: HnswOptions;
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

  /**
   * Saves the approximate index (no-op without `persistDir`, without an approximate index, or when
   * nothing was added since the last save). One save at a time, never mid-refresh. Never rejects: a
   * failed save is logged, and the next start rebuilds.
   */
  save(): Promise<void> {
    this.saving ??= this.write().finally(() => (this.saving = undefined));
    return this.saving;
  }

  /**
   * From now on, every `saveEveryMs`, saves when enough is new that a restart would otherwise spend
   * long adding it: a save holds the event loop while usearch writes the graph (about a second per
   * million vectors). No-op without `persistDir`.
   */
  saveNowAndThen(): void {
    if (!this.options.persistDir) return;
    this.timer = setInterval(() => {
      const size = this.index.size;
      if (size - this.savedRows >= Math.max(SAVE_MIN_NEW_VECTORS, size * 0.05)) void this.save();
    }, this.options.saveEveryMs ?? DEFAULT_SAVE_EVERY_MS);
    this.timer.unref();
  }

  /** Stops the periodic save. */
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
        hnsw: { ...DEFAULT_HNSW, ...this.options.hnsw },
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
   * Loads the saved approximate index into the (empty) index and moves the feed past it, when it is
   * whole, of this model and of this database (the store's vector under its `lastRowid` is the one it
   * recorded). Returns false (logged) when there is none or it cannot be used: the caller loads from
   * the store, and the graph is rebuilt in the background while the exact scan serves. A store failure
   * is thrown (the caller retries).
   */
  async restore(): Promise<boolean> {
    const dir = this.options.persistDir;
    if (!dir) return false;
    const started = performance.now();
    try {
      const { hnsw, dim, ids, cursor } = await this.read(dir);
      this.index.restore(hnsw, dim, ids);
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
  private async read(dir: string): Promise<{ hnsw: HnswIndex; dim: number; ids: string[]; cursor: FeedCursor }> {
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
    const hnsw = await HnswIndex.load(paths.index, manifest.dim, { ...this.options.hnsw, ...manifest.hnsw });
    if (hnsw instanceof Error) throw new SnapshotUnusable(`the approximate index cannot load here (${hnsw.message})`);
    return { hnsw, dim: manifest.dim, ids, cursor: { rowid: manifest.lastRowid, id: manifest.lastId } };
  }
}

/** The SQLite connection: one database file (WAL), owner-only, migrated on open. */
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { NearDuplicateRule } from '../ports/index.js';
import type { SliceOptions } from '../ports/ingest-slice.js';
import { migrate } from './migrations.js';

export interface OpenOptions {
  /** Synchronous wait for another process's write lock before SQLITE_BUSY (default 5 s; the service: a few ms). */
  busyTimeoutMs?: number;
  /** The near-duplicate rule of ingestItems (default: src/dedup/near.ts). */
  nearRule?: NearDuplicateRule;
  /** The slices of ingestItems (default: INGEST_SLICE_ITEMS items). */
  ingestSlices?: SliceOptions;
}

/** Owner-only: accounts and key hashes are not for other local users. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export function openDatabase(file: string, options: OpenOptions = {}): Database.Database {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: DIR_MODE });
    // Created owner-only before SQLite opens it; SQLite gives the -wal and -shm files the same mode.
    if (!existsSync(file)) closeSync(openSync(file, 'a', FILE_MODE));
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // FULL: an article or key the CLI reported as stored survives a power cut, not only a restart.
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  if (file !== ':memory:') tightenModes(file);
  return db;
}

/** Existing files readable by others (0644) become owner-only too. */
function tightenModes(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if ((statSync(f).mode & 0o077) !== 0) chmodSync(f, FILE_MODE);
    } catch {
      /* absent, or not ours to change */
    }
  }
}

/** The StatusStore suite on the embedded engine: a fresh SQLite file per test; a peer is a second connection to it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/ports/index.js';
import { describeStatusStore } from './status.suite.js';

const dirs: string[] = [];
const files = new Map<Store, string>();

describeStatusStore('sqlite', {
  async open() {
    const d = mkdtempSync(join(tmpdir(), 'fns-status-'));
    dirs.push(d);
    const store = new SqliteStore(join(d, 'fns.sqlite'));
    files.set(store, join(d, 'fns.sqlite'));
    return store;
  },
  async peer(store) {
    const p = new SqliteStore(files.get(store)!);
    files.set(p, files.get(store)!);
    return p;
  },
  async cleanup() {
    files.clear();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  },
});

/** The shared store-port suite on the embedded engine: a fresh SQLite file per test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/ports/index.js';
import { describeStorePorts } from './ports.suite.js';

const dirs: string[] = [];
const files = new Map<Store, string>();

describeStorePorts('sqlite', {
  leases: false,
  async open() {
    const d = mkdtempSync(join(tmpdir(), 'fns-ports-'));
    dirs.push(d);
    const store = new SqliteStore(join(d, 'fns.sqlite'));
    files.set(store, join(d, 'fns.sqlite'));
    return store;
  },
  async peer(store) {
    return new SqliteStore(files.get(store)!);
  },
  async cleanup() {
    files.clear();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  },
});

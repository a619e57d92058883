/** The SourceStore suite on the embedded engine: a fresh SQLite file per test; a peer is a second connection to it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { NearDuplicateRule, Store } from '../../src/store/ports.js';
import { describeSourceStore } from './sources.suite.js';

const dirs: string[] = [];
const opened = new Map<Store, { file: string; rule: NearDuplicateRule }>();

describeSourceStore('sqlite', {
  async open(rule) {
    const d = mkdtempSync(join(tmpdir(), 'fns-sources-'));
    dirs.push(d);
    const file = join(d, 'fns.sqlite');
    const store = new SqliteStore(file, { nearRule: rule });
    opened.set(store, { file, rule });
    return store;
  },
  async peer(store) {
    const { file, rule } = opened.get(store)!;
    const p = new SqliteStore(file, { nearRule: rule });
    opened.set(p, { file, rule });
    return p;
  },
  async exec(store, sql) {
    (store as SqliteStore).db.exec(sql);
  },
  async rewindIdentity(store) {
    const db = (store as SqliteStore).db;
    db.exec('ALTER TABLE seen_items DROP COLUMN reason; ALTER TABLE article_carriers DROP COLUMN reason;');
    db.pragma(`user_version = ${(db.pragma('user_version', { simple: true }) as number) - 1}`);
  },
  async cleanup() {
    opened.clear();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  },
});

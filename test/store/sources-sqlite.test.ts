/** The SourceStore suite on the embedded engine: a fresh SQLite file per test; a peer is a second connection to it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite/index.js';
import { IDENTITY_MIGRATION } from '../../src/store/sqlite/sources.js';
import type { NearDuplicateRule, Store } from '../../src/store/ports/index.js';
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
    // The identity migration and every later one run again on reopen: what they add goes too.
    db.exec(
      'ALTER TABLE seen_items DROP COLUMN reason; ALTER TABLE article_carriers DROP COLUMN reason; DROP TABLE IF EXISTS webhook_endpoints;',
    );
    db.pragma(`user_version = ${MIGRATIONS.indexOf(IDENTITY_MIGRATION)}`);
  },
  async cleanup() {
    opened.clear();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  },
});

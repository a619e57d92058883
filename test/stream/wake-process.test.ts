/**
 * Delivery wakes on a write by another process: `fns serve`'s composition (startService, SQLite) with the
 * feed timer an hour away, and the real `fns articles ingest` command line as the writer. The article
 * can only arrive through the wake-up on the commit (the data directory watch and its follow-up reads).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/cli/operator.js';
import { loadConfig } from '../../src/config/index.js';
import { streamAddress } from '../../src/contract/index.js';
import { livePrefix, startService, type RunningService } from '../../src/server/index.js';
import { sqliteFile } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { TrigramEmbedder } from '../support/service.js';
import { repoRoot } from '../support/specs.js';
import { connect, dropClients } from './support.js';

const HOUR = 3_600_000;
let svc: RunningService | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  expect(dropClients()).toEqual([]);
  await svc?.close();
  svc = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function fnsIngest(dir: string, ndjson: string): Promise<{ code: number | null; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir };
  delete env.DATABASE_URL;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [join(repoRoot, 'bin', 'fns.mjs'), 'articles', 'ingest', '-'], {
      env,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    p.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stderr }));
    p.stdin.end(ndjson);
  });
}

describe('delivery wakes on a write by another process (fns articles ingest), not on the feed timer', () => {
  it('delivers each ingested article although the feed is read only hourly otherwise', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'fns-wake-'));
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    const store = new SqliteStore(sqliteFile(config));
    const { key } = await createKey(store.accounts, { tier: 'pro', livePrefix: livePrefix(config), now: Date.now() });
    store.close();
    svc = await startService(config, {
      log: () => {},
      embedder: new TrigramEmbedder(),
      feedPollMs: HOUR,
      pollSources: false,
    });
    const client = connect(`${svc.url.replace(/^http/, 'ws')}${streamAddress}`, { key, ip: '127.0.11.1' });
    await client.opened;
    for (let i = 1; i <= 3; i++) {
      const r = await fnsIngest(dataDir, `${JSON.stringify({ content: `FLASH: from another process ${i}` })}\n`);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      await client.received(i, 20_000);
      expect(client.messages.map((m) => m.content)).toEqual(
        Array.from({ length: i }, (_, k) => `FLASH: from another process ${k + 1}`),
      );
    }
    client.ws.close();
  });
});

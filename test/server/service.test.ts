/** The composed service (startService): what an operator sees in its log, and how it binds. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/cli/operator.js';
import { loadConfig, TRUST_PROXY_TRUE_WARNING } from '../../src/config/index.js';
import { limits, streamAddress } from '../../src/contract/index.js';
import { livePrefix, startService, type RunningService } from '../../src/server/index.js';
import { sqliteFile } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { get, TrigramEmbedder } from '../support/service.js';
import { connect } from '../stream/support.js';
import { until } from '../support/wait.js';

const dirs: string[] = [];
let svc: RunningService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function start(env: Record<string, string>, feedPollMs?: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'fns-svc-'));
  dirs.push(dataDir);
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env });
  const store = new SqliteStore(sqliteFile(config));
  const keys = [];
  for (let i = 0; i <= limits.ipGuard.distinctKeys; i++)
    keys.push((await createKey(store.accounts, { tier: 'pro', livePrefix: livePrefix(config), now: Date.now() })).key);
  store.close();
  const logs: string[] = [];
  svc = await startService(config, {
    log: (m) => logs.push(m),
    embedder: new TrigramEmbedder(),
    ...(feedPollMs ? { feedPollMs } : {}),
  });
  return { svc, logs, keys, port: Number(new URL(svc.url).port), dataDir: config.dataDir };
}

describe('the service log', () => {
  it('logs an IP block with the address and when it ends, and never a key', async () => {
    const { logs, keys, port } = await start({});
    for (const key of keys) await get(port, '/v1/news', { key, ip: '127.70.0.1' });
    const blocks = logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'ip-guard: address blocked' && l.ip === '127.70.0.1');
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({ component: 'state', level: 'warn' });
    const until = blocks[0].until as string;
    expect(Date.parse(until) - Date.now()).toBeGreaterThan(limits.ipGuard.blockMs - 60_000);
    for (const key of keys) expect(logs.join('\n')).not.toContain(key);
  });

  it('warns at start when TRUST_PROXY=true', async () => {
    const { logs } = await start({ TRUST_PROXY: 'true' });
    expect(logs.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({ component: 'config', msg: TRUST_PROXY_TRUE_WARNING }),
    );
  });

  it('exempts IP_GUARD_EXEMPT addresses from the guard', async () => {
    const { logs, keys, port } = await start({ IP_GUARD_EXEMPT: '127.71.0.0/16' });
    for (const key of keys) expect((await get(port, '/v1/account/usage', { key, ip: '127.71.0.1' })).status).toBe(200);
    expect(logs.filter((l) => l.startsWith('ip-guard:'))).toEqual([]);
  });
});

describe('delivery wakes on writes by another local process (SQLite)', () => {
  it('delivers an article committed by another connection although the feed timer is an hour away', async () => {
    const { keys, dataDir } = await start({}, 3_600_000);
    const client = connect(`${svc!.url.replace(/^http/, 'ws')}${streamAddress}`, { key: keys[0]!, ip: '127.72.0.1' });
    await client.opened;
    await until(() => svc!.stream.connections() === 1, 'admission'); // the connection is past its start point
    const cli = new SqliteStore(sqliteFile({ dataDir }));
    const [stored] = await cli.articles.insert(
      [{ content: 'FLASH: woken by the commit', urgency: 'flash', sentiment: null, published_at: null, tickers: [] }],
      Date.now,
    );
    cli.close();
    const got = await client.received(1, 10_000);
    expect(got.map((m) => m.id)).toEqual([stored!.id]);
    client.ws.close();
  });
});

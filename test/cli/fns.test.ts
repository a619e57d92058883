/** The operator command line, run as a real process against the store of a running service. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startService, type RunningService } from '../../src/server/index.js';
import { repoRoot } from '../support/specs.js';
import { TrigramEmbedder, get } from '../support/service.js';

const run = promisify(execFile);
let dir: string;
let svc: RunningService;

async function fns(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [join(repoRoot, 'bin', 'fns.mjs'), ...args], { env: { ...process.env, DATA_DIR: dir } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e: any) {
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const port = () => Number(new URL(svc.url).port);
let ipSeq = 0;
const usage = (key: string) => get(port(), '/v1/account/usage', { key, ip: `127.2.0.${++ipSeq}` });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fns-cli-'));
  svc = await startService({ ...loadConfig({ DATA_DIR: dir }), port: 0, host: '127.0.0.1' }, { log: () => {}, embedder: new TrigramEmbedder() });
});
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fns keys create', () => {
  it('prints the key once as JSON, and stores only its hash', async () => {
    const r = await fns('keys', 'create', '--tier', 'pro', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({ key: expect.stringMatching(/^fns_live_[\w-]{32}$/), key_id: expect.any(String), account_id: expect.any(String) });
    expect((await usage(out.key)).body.tier).toBe('pro');
    const db = readFileSync(join(dir, 'fns.sqlite')).toString('latin1') + readFileSync(join(dir, 'fns.sqlite-wal')).toString('latin1');
    expect(db).not.toContain(out.key);
  });
  it('adds a key to an existing account, which then shares the account', async () => {
    const a = JSON.parse((await fns('keys', 'create', '--tier', 'max', '--account', 'acct_cli_shared', '--json')).stdout);
    const b = JSON.parse((await fns('keys', 'create', '--account', 'acct_cli_shared', '--json')).stdout);
    expect(b.account_id).toBe(a.account_id);
    expect((await usage(b.key)).body.tier).toBe('max');
  });
  it('refuses an unknown tier with a clear message and exit code 2', async () => {
    const r = await fns('keys', 'create', '--tier', 'gold');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--tier must be one of starter, pro, max, free');
  });
});

describe('key and account changes reach the running service within one second', () => {
  it('deactivate, activate, cancel and set-tier', async () => {
    const k = JSON.parse((await fns('keys', 'create', '--tier', 'max', '--json')).stdout);
    expect((await fns('keys', 'deactivate', k.key_id)).code).toBe(0);
    expect((await usage(k.key)).status).toBe(403);
    expect((await fns('keys', 'activate', k.key_id)).code).toBe(0);
    expect((await usage(k.key)).status).toBe(200);
    const cancelled = JSON.parse((await fns('accounts', 'cancel', k.account_id, '--json')).stdout);
    expect(cancelled.cancelled_at).not.toBeNull();
    expect((await usage(k.key)).body).toEqual({ tier: 'expired', rate_limit: 1, period_end: null });
    await fns('accounts', 'set-tier', k.account_id, 'starter');
    expect((await usage(k.key)).body).toMatchObject({ tier: 'starter', rate_limit: 1 });
  });
  it('cancels only a subscription: a free account stays free, and a cancellation is not repeated', async () => {
    const free = JSON.parse((await fns('keys', 'create', '--tier', 'free', '--json')).stdout);
    const r = await fns('accounts', 'cancel', free.account_id);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has no subscription to cancel (tier free)');
    expect((await usage(free.key)).body.tier).toBe('free');
    const pro = JSON.parse((await fns('keys', 'create', '--tier', 'pro', '--json')).stdout);
    expect((await fns('accounts', 'cancel', pro.account_id)).code).toBe(0);
    expect((await fns('accounts', 'cancel', pro.account_id)).stderr).toContain('was already cancelled');
  });
  it('reports an unknown key or account', async () => {
    expect((await fns('keys', 'deactivate', 'key_nope')).stderr).toContain('no key key_nope');
    expect((await fns('accounts', 'cancel', 'acct_nope')).code).toBe(2);
  });
});

describe('fns articles ingest', () => {
  it('stores the good lines, reports bad ones by line number, and the service lists them', async () => {
    const file = join(dir, 'in.ndjson');
    writeFileSync(file, '{"content":"CLI ingested headline about copper"}\n{"content":""}\n{"content":"Second CLI headline","urgency":"flash"}\n');
    const r = await fns('articles', 'ingest', file, '--json');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('line 2: content is required');
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ lines: 3, ingested: 2, errors: [{ line: 2 }] });
    const k = JSON.parse((await fns('keys', 'create', '--tier', 'pro', '--json')).stdout);
    const list = await get(port(), '/v1/news?limit=2', { key: k.key, ip: '127.2.1.1' });
    expect(list.body.articles.map((a: any) => a.content)).toEqual(['Second CLI headline', 'CLI ingested headline about copper']);
  });
});

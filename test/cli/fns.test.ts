/** The operator command line, run as a real process against the store of a running service. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startService, type RunningService } from '../../src/server/index.js';
import { hashKey } from '../../src/store/ports/ids.js';
import { TrigramEmbedder, get } from '../support/service.js';
import { expectCleanFailure, tempDataDir } from './support.js';

const data = tempDataDir('fns-cli-');
const { fns } = data;
let svc: RunningService;

const port = () => Number(new URL(svc.url).port);
let ipSeq = 0;
const usage = (key: string) => get(port(), '/v1/account/usage', { key, ip: `127.2.0.${++ipSeq}` });
const json = async (...args: string[]) => {
  const r = await fns(...args, '--json');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
};

beforeAll(async () => {
  svc = await startService(
    { ...loadConfig({ DATA_DIR: data.dir }), port: 0, host: '127.0.0.1' },
    { log: () => {}, embedder: new TrigramEmbedder() },
  );
});
afterAll(async () => {
  await svc.close();
  data.remove();
});

describe('fns keys create --tier: a new account on that tier and its first key', () => {
  it('prints the key once as JSON, and stores only its hash', async () => {
    const out = await json('keys', 'create', '--tier', 'pro');
    expect(out).toEqual({
      key: expect.stringMatching(/^fns_live_[\w-]{32}$/),
      key_id: expect.any(String),
      account_id: expect.any(String),
    });
    expect((await usage(out.key)).body.tier).toBe('pro');
    const db =
      readFileSync(join(data.dir, 'fns.sqlite')).toString('latin1') +
      readFileSync(join(data.dir, 'fns.sqlite-wal')).toString('latin1');
    expect(db).not.toContain(out.key);
  });
  it('refuses an unknown tier, or neither --tier nor --account, with exit code 2', async () => {
    expectCleanFailure(
      await fns('keys', 'create', '--tier', 'gold'),
      2,
      '--tier must be one of starter, pro, max, free',
    );
    expectCleanFailure(
      await fns('keys', 'create'),
      2,
      'give --tier <tier> for a new account, or --account <account_id>',
    );
  });
});

describe('fns keys create --account: one more key on an existing account, never a new account', () => {
  it('adds a key to an account made with fns accounts create; the keys share the account', async () => {
    const acct = await json('accounts', 'create', '--tier', 'max');
    const a = await json('keys', 'create', '--account', acct.account_id);
    const b = await json('keys', 'create', '--account', acct.account_id);
    expect([a.account_id, b.account_id]).toEqual([acct.account_id, acct.account_id]);
    expect((await usage(b.key)).body.tier).toBe('max');
  });
  it('refuses an unknown (mistyped) account with exit code 1, names fns accounts create, and creates nothing', async () => {
    const before = await json('keys', 'list');
    expectCleanFailure(
      await fns('keys', 'create', '--tier', 'pro', '--account', 'acct_typo'),
      1,
      'no account acct_typo',
    );
    expect((await fns('keys', 'create', '--account', 'acct_typo')).stderr).toContain('fns accounts create');
    expect(await json('keys', 'list')).toEqual(before);
    expect((await fns('accounts', 'show', 'acct_typo')).code).toBe(1);
  });
  it("refuses a --tier that differs from the account's and points to set-tier", async () => {
    const acct = await json('accounts', 'create', '--tier', 'starter');
    expectCleanFailure(
      await fns('keys', 'create', '--account', acct.account_id, '--tier', 'max'),
      1,
      `fns accounts set-tier ${acct.account_id} max`,
    );
  });
});

describe("fns accounts create and show: an account's state and its keys, never a key", () => {
  it("creates an account with a generated id; show gives tier, period, cancellation and each key's state", async () => {
    const acct = await json('accounts', 'create', '--tier', 'pro');
    expect(acct).toEqual({
      account_id: expect.stringMatching(/^acct_/),
      tier: 'pro',
      period_end: expect.any(String),
      cancelled_at: null,
    });
    expect(await json('accounts', 'show', acct.account_id)).toEqual({ ...acct, effective_tier: 'pro', keys: [] });

    const k1 = await json('keys', 'create', '--account', acct.account_id);
    const k2 = await json('keys', 'create', '--account', acct.account_id);
    await json('keys', 'deactivate', k1.key_id);
    await json('accounts', 'cancel', acct.account_id);
    const shown = await fns('accounts', 'show', acct.account_id, '--json');
    expect(JSON.parse(shown.stdout)).toEqual({
      account_id: acct.account_id,
      tier: 'pro',
      effective_tier: 'expired',
      period_end: acct.period_end,
      cancelled_at: expect.any(String),
      keys: [
        { key_id: k1.key_id, active: false, created_at: expect.any(String) },
        { key_id: k2.key_id, active: true, created_at: expect.any(String) },
      ],
    });
    const human = await fns('accounts', 'show', acct.account_id);
    expect(human.stdout).toContain('in force now: expired');
    expect(human.stdout).toMatch(new RegExp(`${k1.key_id}\\s+inactive`));
    for (const out of [shown.stdout, human.stdout]) {
      for (const k of [k1, k2]) {
        expect(out).not.toContain(k.key);
        expect(out).not.toContain(hashKey(k.key));
      }
    }
  });
  it('a free account has no billing period', async () => {
    expect(await json('accounts', 'create', '--tier', 'free')).toMatchObject({ tier: 'free', period_end: null });
  });
});

describe('fns keys list: key ids, their account and state', () => {
  it("lists every key, or one account's; an unknown account is refused", async () => {
    const a = await json('keys', 'create', '--tier', 'starter');
    const b = await json('keys', 'create', '--tier', 'starter');
    const all = (await json('keys', 'list')).keys.map((k: { key_id: string }) => k.key_id);
    expect(all).toEqual(expect.arrayContaining([a.key_id, b.key_id]));
    expect(await json('keys', 'list', '--account', a.account_id)).toEqual({
      keys: [{ key_id: a.key_id, account_id: a.account_id, active: true, created_at: expect.any(String) }],
    });
    expect((await fns('keys', 'list', '--account', a.account_id)).stdout).toMatch(
      new RegExp(`^${a.key_id}\\s+${a.account_id}\\s+active`),
    );
    expectCleanFailure(await fns('keys', 'list', '--account', 'acct_nope'), 1, 'no account acct_nope');
  });
});

describe('key and account changes reach the running service within one second', () => {
  it('deactivate, activate, cancel and set-tier', async () => {
    const k = await json('keys', 'create', '--tier', 'max');
    expect((await fns('keys', 'deactivate', k.key_id)).code).toBe(0);
    expect((await usage(k.key)).status).toBe(403);
    expect((await fns('keys', 'activate', k.key_id)).code).toBe(0);
    expect((await usage(k.key)).status).toBe(200);
    const cancelled = await json('accounts', 'cancel', k.account_id);
    expect(cancelled.cancelled_at).not.toBeNull();
    expect((await usage(k.key)).body).toEqual({ tier: 'expired', rate_limit: 1, period_end: null });
    expect((await fns('accounts', 'set-tier', k.account_id, 'starter')).code).toBe(0);
    expect((await usage(k.key)).body).toMatchObject({ tier: 'starter', rate_limit: 1 });
  });
  it('cancels only a subscription: a free account stays free, and a cancellation is not repeated (exit 1)', async () => {
    const free = await json('keys', 'create', '--tier', 'free');
    expectCleanFailure(
      await fns('accounts', 'cancel', free.account_id),
      1,
      'has no subscription to cancel (tier free)',
    );
    expect((await usage(free.key)).body.tier).toBe('free');
    const pro = await json('keys', 'create', '--tier', 'pro');
    expect((await fns('accounts', 'cancel', pro.account_id)).code).toBe(0);
    expectCleanFailure(await fns('accounts', 'cancel', pro.account_id), 1, 'was already cancelled');
  });
  it('reports an unknown key or account with exit code 1, and a bad tier with exit code 2', async () => {
    expectCleanFailure(await fns('keys', 'deactivate', 'key_nope'), 1, 'no key key_nope');
    expectCleanFailure(await fns('accounts', 'cancel', 'acct_nope'), 1, 'no account acct_nope');
    expectCleanFailure(await fns('accounts', 'set-tier', 'acct_nope', 'pro'), 1, 'no account acct_nope');
    expectCleanFailure(await fns('accounts', 'set-tier', 'acct_nope', 'gold'), 2, 'the tier must be one of');
  });
});

describe('fns articles ingest', () => {
  it('stores the good lines, reports bad ones by line number (exit 3: partial), and the service lists them', async () => {
    const file = join(data.dir, 'in.ndjson');
    writeFileSync(
      file,
      '{"content":"CLI ingested headline about copper"}\n{"content":""}\n\n{"content":"Second CLI headline","urgency":"flash"}\n',
    );
    const r = await fns('articles', 'ingest', file, '--json');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('line 2: content is required');
    expect(r.stderr).not.toContain('\r'); // no progress line: standard error is not a terminal
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({
      lines: 3,
      ingested: 2,
      ids: [expect.any(String), expect.any(String)],
      duplicates: [],
      errors: [{ line: 2, error: expect.any(String) }],
    });
    const k = await json('keys', 'create', '--tier', 'pro');
    const list = await get(port(), '/v1/news?limit=2', { key: k.key, ip: '127.2.1.1' });
    expect(list.body.articles.map((a: any) => a.content)).toEqual([
      'Second CLI headline',
      'CLI ingested headline about copper',
    ]);
    // Lines without source or url: both keys present, null (contract 1.2.0), for a pro key too.
    expect(list.body.articles.map((a: any) => [a.source, a.url])).toEqual([
      [null, null],
      [null, null],
    ]);
  });
});

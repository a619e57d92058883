/**
 * `fns webhooks …` as an operator runs it (real processes on a temp DATA_DIR), and the service's
 * deliveries across a `kill -9` during a receiver outage: after the restart every article arrives, in
 * order, nothing lost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { expectCleanFailure, fnsBin, fnsWith, ndjson, tempDataDir } from '../cli/support.js';
import { independentlyVerified, startReceiver } from './receiver.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function deploymentDir(allowPrivate = true) {
  const d = tempDataDir('fns-wh-cli-');
  cleanups.push(d.remove);
  const env: Record<string, string> = allowPrivate ? { WEBHOOK_ALLOW_PRIVATE: 'true' } : {};
  const fns = (...args: string[]) => fnsWith({ dataDir: d.dir, env }, ...args);
  const ingest = (input: string) => fnsWith({ dataDir: d.dir, env, input }, 'articles', 'ingest', '-');
  return { dir: d.dir, env, fns, ingest };
}

async function account(
  fns: (...a: string[]) => Promise<{ stdout: string; code: number | null }>,
  tier: string,
): Promise<string> {
  const r = await fns('accounts', 'create', '--tier', tier, '--json');
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { account_id: string }).account_id;
}

/** `fns serve` on a free loopback port; resolves once it listens. */
async function serve(
  dir: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child = spawn(process.execPath, [fnsBin, 'serve'], {
    env: { ...process.env, ...env, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const check = (c: Buffer) => {
      out += c.toString();
      if (/listening on/.test(out)) resolve();
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.on('exit', (code) => reject(new Error(`fns serve exited with ${code}:\n${out}`)));
  });
  return { child, exited };
}

describe('fns webhooks: the operator commands', () => {
  it('add prints the id and the secret once; list shows state and backlog; pause, resume, remove', async () => {
    const { fns } = deploymentDir();
    const acct = await account(fns, 'pro');
    const added = await fns('webhooks', 'add', acct, 'http://127.0.0.1:9/hook', '--json');
    expect(added.code).toBe(0);
    const a = JSON.parse(added.stdout) as { id: string; secret: string; state: string };
    expect(a.id).toMatch(/^wh_[0-9a-f]{16}$/);
    expect(a.secret).toMatch(/^whsec_/);
    expect(a.state).toBe('active');
    const list = JSON.parse((await fns('webhooks', 'list', '--json')).stdout) as {
      webhooks: Record<string, unknown>[];
    };
    expect(list.webhooks).toHaveLength(1);
    expect(list.webhooks[0]).toMatchObject({
      id: a.id,
      account_id: acct,
      state: 'active',
      backlog: 0,
      failures_in_a_row: 0,
      last_success_at: null,
      last_error: null,
      next_attempt_at: null,
    });
    expect(JSON.stringify(list)).not.toContain(a.secret.slice(6));
    expect((await fns('webhooks', 'pause', a.id)).stdout).toMatch(/paused/);
    const paused = JSON.parse((await fns('webhooks', 'list', '--account', acct, '--json')).stdout) as {
      webhooks: { state: string; paused_reason: string }[];
    };
    expect(paused.webhooks[0]).toMatchObject({
      state: 'paused',
      paused_reason: 'paused by an operator (fns webhooks pause)',
    });
    expect((await fns('webhooks', 'resume', a.id)).code).toBe(0);
    expect((await fns('webhooks', 'list')).stdout).toMatch(new RegExp(`${a.id}\\s+${acct}\\s+active`));
    expect((await fns('webhooks', 'remove', a.id)).code).toBe(0);
    expectCleanFailure(await fns('webhooks', 'remove', a.id), 1, `no webhook endpoint "${a.id}"`);
  });

  it('refuses starter, expired and free accounts, tickers on pro, and private or http URLs without the flag', async () => {
    const { fns } = deploymentDir();
    for (const tier of ['starter', 'free']) {
      const acct = await account(fns, tier);
      expectCleanFailure(
        await fns('webhooks', 'add', acct, 'http://127.0.0.1:9/'),
        1,
        `account ${acct} is on ${tier}: webhooks are available to pro and max accounts only`,
      );
    }
    const cancelled = await account(fns, 'max');
    await fns('accounts', 'cancel', cancelled);
    expectCleanFailure(
      await fns('webhooks', 'add', cancelled, 'http://127.0.0.1:9/'),
      1,
      `is on expired: webhooks are available to pro and max accounts only`,
    );
    const pro = await account(fns, 'pro');
    expectCleanFailure(
      await fns('webhooks', 'add', pro, 'http://127.0.0.1:9/', '--tickers', 'AAPL'),
      1,
      '--tickers is available to max accounts only',
    );
    const max = await account(fns, 'max');
    expect(
      (await fns('webhooks', 'add', max, 'http://127.0.0.1:9/', '--tickers', 'aapl,MSFT', '--json')).stdout,
    ).toMatch(/"tickers":\["AAPL","MSFT"\]/);
    const strict = deploymentDir(false);
    const p2 = await account(strict.fns, 'pro');
    expectCleanFailure(
      await strict.fns('webhooks', 'add', p2, 'http://hooks.example.com/'),
      2,
      'the webhook URL must use https',
    );
    expectCleanFailure(
      await strict.fns('webhooks', 'add', p2, 'https://localhost/'),
      1,
      'refused: localhost resolves to',
    );
    expectCleanFailure(
      await strict.fns('webhooks', 'add', p2, 'https://127.0.0.1/'),
      1,
      '127.0.0.1, a private, loopback or link-local address',
    );
  });

  it('send-test delivers a signed request; after rotate-secret both secrets sign it', async () => {
    const { fns } = deploymentDir();
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const acct = await account(fns, 'max');
    const a = JSON.parse((await fns('webhooks', 'add', acct, receiver.url, '--json')).stdout) as {
      id: string;
      secret: string;
    };
    const sent = await fns('webhooks', 'send-test', a.id, '--json');
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ status: 200, ok: true });
    const [first] = await receiver.waitFor(1);
    expect(independentlyVerified(a.secret, first!.headers, first!.body)).toBe(true);
    expect(JSON.parse(first!.body)).toMatchObject({
      type: 'article.created',
      data: { content: 'Test delivery from fns webhooks send-test', tickers: [] },
    });
    const rotated = JSON.parse((await fns('webhooks', 'rotate-secret', a.id, '--json')).stdout) as { secret: string };
    expect(rotated.secret).not.toBe(a.secret);
    await fns('webhooks', 'send-test', a.id);
    const [, second] = await receiver.waitFor(2);
    expect(String(second!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(independentlyVerified(a.secret, second!.headers, second!.body)).toBe(true);
    expect(independentlyVerified(rotated.secret, second!.headers, second!.body)).toBe(true);
    receiver.answer = () => 500;
    expectCleanFailure(await fns('webhooks', 'send-test', a.id), 1, /^$|HTTP 500/);
  });
});

describe('fns webhooks: plan changes and secret rotations', () => {
  it('resume refuses a ticker-filtered endpoint while its account is not on max, and accepts it on max again', async () => {
    const { fns } = deploymentDir();
    const acct = await account(fns, 'max');
    const a = JSON.parse(
      (await fns('webhooks', 'add', acct, 'http://127.0.0.1:9/hook', '--tickers', 'MSFT', '--json')).stdout,
    ) as { id: string };
    expect((await fns('webhooks', 'pause', a.id)).code).toBe(0);
    expect((await fns('accounts', 'set-tier', acct, 'pro')).code).toBe(0);
    expectCleanFailure(
      await fns('webhooks', 'resume', a.id),
      1,
      `${a.id} filters by tickers (MSFT), available to max accounts only (as the stream's ticker filter); account ${acct} is on pro`,
    );
    const still = JSON.parse((await fns('webhooks', 'list', '--json')).stdout) as {
      webhooks: { state: string; tickers: string[] }[];
    };
    expect(still.webhooks[0]).toMatchObject({ state: 'paused', tickers: ['MSFT'] });
    expect((await fns('accounts', 'set-tier', acct, 'max')).code).toBe(0);
    expect((await fns('webhooks', 'resume', a.id)).code).toBe(0);
  });

  it('rotate-secret beyond 3 previous secrets drops the oldest and says so; list counts 4 signing secrets', async () => {
    const { fns } = deploymentDir();
    const acct = await account(fns, 'pro');
    const a = JSON.parse((await fns('webhooks', 'add', acct, 'http://127.0.0.1:9/hook', '--json')).stdout) as {
      id: string;
    };
    const rotations: { previous_secrets_signing: number; previous_secrets_dropped: number }[] = [];
    for (let i = 0; i < 3; i++)
      rotations.push(
        JSON.parse((await fns('webhooks', 'rotate-secret', a.id, '--json')).stdout) as (typeof rotations)[number],
      );
    expect(rotations.map((r) => [r.previous_secrets_signing, r.previous_secrets_dropped])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
    ]);
    const fourth = await fns('webhooks', 'rotate-secret', a.id);
    expect(fourth.code).toBe(0);
    expect(fourth.stdout).toContain('signed with the new secret and the 3 previous ones');
    expect(fourth.stdout).toContain(
      '(the oldest previous secret no longer signs: at most 3 previous secrets sign beside the new one)',
    );
    const list = JSON.parse((await fns('webhooks', 'list', '--json')).stdout) as { webhooks: { secrets: number }[] };
    expect(list.webhooks[0]!.secrets).toBe(4);
  });
});

describe('fns webhooks resume refuses an endpoint whose account no longer exists', () => {
  it('exits 1 naming the account, and the endpoint stays paused', async () => {
    const { dir, fns } = deploymentDir();
    const acct = await account(fns, 'pro');
    const a = JSON.parse((await fns('webhooks', 'add', acct, 'http://127.0.0.1:9/hook', '--json')).stdout) as {
      id: string;
    };
    expect((await fns('webhooks', 'pause', a.id)).code).toBe(0);
    // The account's row removed behind the command line's back (there is no command for it).
    const db = new Database(join(dir, 'fns.sqlite'));
    db.pragma('foreign_keys = OFF');
    db.prepare('DELETE FROM accounts WHERE id = ?').run(acct);
    db.close();
    expectCleanFailure(await fns('webhooks', 'resume', a.id), 1, `the account ${acct} of ${a.id} no longer exists`);
    const list = JSON.parse((await fns('webhooks', 'list', '--json')).stdout) as { webhooks: { state: string }[] };
    expect(list.webhooks[0]!.state).toBe('paused');
  });
});

/** An endpoint whose secret is sealed with WEBHOOK_SECRETS_KEY `key`, and `fns` run with a key of the caller's choice. */
async function sealedEndpoint() {
  const { dir, env } = deploymentDir();
  const key = Buffer.alloc(32, 7).toString('base64');
  const withKey = (k: string | undefined, ...args: string[]) =>
    fnsWith({ dataDir: dir, env: { ...env, WEBHOOK_SECRETS_KEY: k } }, ...args);
  const acct = await account((...a) => withKey(key, ...a), 'pro');
  const { id } = JSON.parse(
    (await withKey(key, 'webhooks', 'add', acct, 'http://127.0.0.1:9/hook', '--json')).stdout,
  ) as {
    id: string;
  };
  return { id, key, withKey };
}

/** `command` on a sealed endpoint without its key, then with another key: one line each, exit 2 (configuration). */
async function expectKeyRefusals(
  withKey: Awaited<ReturnType<typeof sealedEndpoint>>['withKey'],
  command: string,
  id: string,
) {
  expectCleanFailure(
    await withKey(undefined, 'webhooks', command, id),
    2,
    `${id}: a webhook secret is stored encrypted: set WEBHOOK_SECRETS_KEY to the key it was sealed with`,
  );
  expectCleanFailure(
    await withKey(Buffer.alloc(32, 8).toString('base64'), 'webhooks', command, id),
    2,
    `${id}: a webhook secret could not be opened: WEBHOOK_SECRETS_KEY is not the key it was sealed with`,
  );
}

describe('fns webhooks send-test without the key its secrets were sealed with: one line, exit 2 (configuration)', () => {
  it('WEBHOOK_SECRETS_KEY unset, or another key: the message says so, no stack trace', async () => {
    const { id, withKey } = await sealedEndpoint();
    await expectKeyRefusals(withKey, 'send-test', id);
  });
});

describe('fns webhooks rotate-secret without the key the secrets were sealed with: refused, nothing stored', () => {
  it('WEBHOOK_SECRETS_KEY unset, or another key: exit 2 and no secret added; with the key it rotates', async () => {
    const { id, key, withKey } = await sealedEndpoint();
    await expectKeyRefusals(withKey, 'rotate-secret', id);
    const secrets = async () =>
      (JSON.parse((await withKey(key, 'webhooks', 'list', '--json')).stdout) as { webhooks: { secrets: number }[] })
        .webhooks[0]!.secrets;
    expect(await secrets()).toBe(1);
    expect((await withKey(key, 'webhooks', 'rotate-secret', id)).code).toBe(0);
    expect(await secrets()).toBe(2);
  });
});

describe('fns serve delivers webhooks at least once across kill -9', () => {
  it('an outage, a kill -9, a restart: every article arrives, in order, each verifiable', async () => {
    const { dir, env, fns, ingest } = deploymentDir();
    const receiver = await startReceiver(() => 503);
    cleanups.push(() => receiver.close());
    const acct = await account(fns, 'pro');
    const a = JSON.parse((await fns('webhooks', 'add', acct, receiver.url, '--json')).stdout) as {
      id: string;
      secret: string;
    };
    const first = await serve(dir, env);
    expect((await ingest(ndjson(5, 'Outage'))).code).toBe(0);
    // The receiver is down: the first article is tried (and failed) at least once.
    await receiver.waitFor(1);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(
      receiver.received.every((r) =>
        (JSON.parse(r.body) as { data: { content: string } }).data.content.startsWith('Outage 0'),
      ),
    ).toBe(true);
    // Back up; the service restarts and resumes from the stored cursor.
    receiver.answer = () => 200;
    const failedBefore = receiver.received.length;
    await serve(dir, env);
    const got = await receiver.waitFor(failedBefore + 5);
    const delivered = got.slice(failedBefore).map((r) => JSON.parse(r.body) as { data: { content: string } });
    expect(delivered.map((b) => b.data.content.split(' about')[0])).toEqual([
      'Outage 0',
      'Outage 1',
      'Outage 2',
      'Outage 3',
      'Outage 4',
    ]);
    for (const r of got) expect(independentlyVerified(a.secret, r.headers, r.body)).toBe(true);
    // Every attempt at one article carried one webhook-id.
    expect(new Set(got.slice(0, failedBefore + 1).map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (;;) {
      const l = JSON.parse((await fns('webhooks', 'list', '--json')).stdout) as {
        webhooks: { backlog: number; failures_in_a_row: number }[];
      };
      if (l.webhooks[0]!.backlog === 0) {
        expect(l.webhooks[0]!.failures_in_a_row).toBe(0);
        break;
      }
    }
  });
});

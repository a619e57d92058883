/** The command line itself: help, exit codes, and a wrong command line refused with exit code 2. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commands, parseCommandLine } from '../../src/cli/commands.js';
import { EXIT, explain } from '../../src/cli/errors.js';
import { expectCleanFailure, fnsWith, tempDataDir } from './support.js';

const data = tempDataDir('fns-usage-');
const { fns } = data;
afterAll(() => data.remove());

describe('fns help, fns help <command> and --help', () => {
  it('fns help lists every command and the exit codes, on standard output, exit 0', async () => {
    const r = await fns('help');
    expect(r.code).toBe(0);
    for (const c of commands) expect(r.stdout).toContain(`fns ${c.name} `);
    for (const code of Object.values(EXIT)) expect(r.stdout).toMatch(new RegExp(`^  ${code}  \\S`, 'm'));
    expect((await fns('--help')).stdout).toBe(r.stdout);
  });
  it('fns help names the page that describes the configuration variables, and that page has a row for each one it lists', async () => {
    const r = await fns('help');
    const line = /^Configuration: environment variables \(([^)]*)\), described in (\S+)\.$/m.exec(r.stdout);
    expect(line, r.stdout).not.toBeNull();
    const page = readFileSync(join(import.meta.dirname, '../..', line![2]!), 'utf8');
    for (const name of line![1]!.split(', ').filter((n) => n !== '...')) expect(page).toContain(`| \`${name}\` |`);
  });
  it('help on one command: fns help <command>, fns <command> --help and -h say the same', async () => {
    const r = await fns('help', 'keys', 'create');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Usage: fns keys create --tier <tier> \[--json\]\n\s+fns keys create --account <account_id> \[--json\]/,
    );
    expect((await fns('keys', 'create', '--help')).stdout).toBe(r.stdout);
    expect((await fns('keys', 'create', '-h')).stdout).toBe(r.stdout);
  });
  it('no command, or an unknown one, prints the usage on standard error with exit code 2', async () => {
    const none = await fns();
    expectCleanFailure(none, 2, 'no command given');
    expect(none.stderr).toContain('fns articles ingest <file.ndjson | ->');
    expect(none.stdout).toBe('');
    const unknown = await fns('frobnicate');
    expectCleanFailure(unknown, 2, 'unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Exit codes');
    expectCleanFailure(await fns('keys', 'rotate'), 2, 'unknown command "keys rotate"; one of:');
    expectCleanFailure(await fns('help', 'nope'), 2, 'unknown command "nope"');
  });
  it('help needs no valid configuration', async () => {
    expect((await fnsWith({ dataDir: data.dir, env: { PORT: 'abc' } }, 'help')).code).toBe(0);
  });
});

/** The message a wrong command line gets, and its exit code, as `fns` prints them. */
function refusal(args: string[]) {
  try {
    parseCommandLine(args);
  } catch (e) {
    return explain(e);
  }
  return undefined;
}

describe('a wrong command line exits 2 with one clear line (and the usage), never a stack trace', () => {
  it.each([
    [['keys', 'create', '--tier', 'pro', '--tier', 'max'], '--tier is given more than once'],
    [['keys', 'create', '--tier=pro', '--tier', 'pro'], '--tier is given more than once'],
    [['keys', 'list', '--json', '--json'], '--json is given more than once'],
    [['keys', 'create', '--tier', 'pro', 'extra'], 'unexpected argument "extra"'],
    [['keys', 'deactivate', 'key_a', 'key_b'], 'unexpected argument "key_b"'],
    [['accounts', 'set-tier', 'acct_x'], 'missing <tier>'],
    [['keys', 'activate'], 'missing <key_id>'],
    [['articles', 'ingest'], 'missing <file>'],
    [['keys', 'list', '--tier', 'pro'], 'fns keys list does not take --tier'],
    [['serve', '--json'], 'fns serve does not take --json'],
    [['help', 'keys', 'create', '--json'], 'fns help does not take --json'],
    [['keys', 'list', '--verbose'], "Unknown option '--verbose'"],
    [['keys', 'create', '--tier'], "Option '--tier <value>' argument missing"],
    [['serve', '--port', '99999'], '--port must be an integer between 0 and 65535, got "99999"'],
    [['demo', '--port', 'http'], '--port must be an integer between 0 and 65535, got "http"'],
    [['serve', '--host', 'not a host'], '--host must be an IP address or a host name'],
  ])('fns %j', (args, message) => {
    const r = refusal(args as string[]);
    expect(r?.exitCode).toBe(2);
    expect(r?.message).toContain(message);
  });
  it('as real processes: one line on standard error, the usage of the command, exit 2', async () => {
    const repeated = await fns('keys', 'create', '--tier', 'pro', '--tier', 'max');
    expectCleanFailure(repeated, 2, '--tier is given more than once');
    const extra = await fns('keys', 'create', '--tier', 'pro', 'extra');
    expectCleanFailure(extra, 2, 'unexpected argument "extra"');
    expect(extra.stderr).toContain('usage: fns keys create --tier <tier> [--json]');
    expectCleanFailure(await fns('keys', 'list', '--verbose'), 2, "Unknown option '--verbose'");
    expectCleanFailure(await fns('serve', '--port', '99999'), 2, '--port must be an integer between 0 and 65535');
  });
  it('an invalid environment variable is a configuration error: exit 2, the variable named', async () => {
    expectCleanFailure(
      await fnsWith({ dataDir: data.dir, env: { PORT: 'eighty' } }, 'keys', 'list'),
      2,
      'PORT must be an integer between 0 and 65535, got "eighty"',
    );
  });
  it('parses a valid command line into the command, its arguments and options', () => {
    expect(parseCommandLine(['accounts', 'set-tier', 'acct_1', 'max', '--json'])).toMatchObject({
      kind: 'run',
      command: { name: 'accounts set-tier' },
      args: ['acct_1', 'max'],
      options: { json: true },
    });
    expect(parseCommandLine(['articles', 'ingest', '-'])).toMatchObject({ kind: 'run', args: ['-'] });
  });
});

describe('exit codes: 0 done, 1 not done, 2 usage or configuration error, 3 partial ingest', () => {
  it('each code as documented', async () => {
    const good = join(data.dir, 'good.ndjson');
    const mixed = join(data.dir, 'mixed.ndjson');
    const bad = join(data.dir, 'bad.ndjson');
    writeFileSync(good, '{"content":"one"}\n');
    writeFileSync(mixed, '{"content":"two"}\nnot json\n');
    writeFileSync(bad, 'not json\n{"content":1}\n');
    expect((await fns('keys', 'list')).code).toBe(EXIT.ok);
    expect((await fns('articles', 'ingest', good)).code).toBe(EXIT.ok);
    expect((await fns('keys', 'deactivate', 'key_missing')).code).toBe(EXIT.failed);
    expect((await fns('articles', 'ingest', bad)).code).toBe(EXIT.failed);
    expect((await fns('articles', 'ingest', join(data.dir, 'absent.ndjson'))).code).toBe(EXIT.failed);
    expect((await fns('keys', 'create', '--tier', 'gold')).code).toBe(EXIT.usage);
    expect((await fns('articles', 'ingest', mixed)).code).toBe(EXIT.partial);
    expect([EXIT.ok, EXIT.failed, EXIT.usage, EXIT.partial]).toEqual([0, 1, 2, 3]);
  });
});

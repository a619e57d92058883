/**
 * `fns sources add|list|pause|resume|remove` as a real process: validation with clear messages and the
 * documented exit codes, the human table and the JSON, refusals; the formatting helpers directly.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { urgencies } from '../../src/contract/index.js';
import { formatDuration, parseDuration, SOURCE_EVERY, sourcesTable } from '../../src/cli/sources.js';
import { EXIT } from '../../src/cli/errors.js';
import type { SourceRecord } from '../../src/store/ports/index.js';
import { expectCleanFailure, tempDataDir } from '../cli/support.js';

const data = tempDataDir('fns-sources-cli-');
afterAll(() => data.remove());
const { fns } = data;

describe('fns sources add validates before it stores', () => {
  it('refuses a bad name, URL, duration or urgency as a usage error, naming the rule', async () => {
    expectCleanFailure(
      await fns('sources', 'add', 'has space', 'http://example.com/f'),
      EXIT.usage,
      'a source name is 1-64 letters',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'x'.repeat(65), 'http://example.com/f'),
      EXIT.usage,
      'a source name is 1-64 letters',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'ftp://example.com/f'),
      EXIT.usage,
      '<url> must use http or https',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'example.com/f'),
      EXIT.usage,
      '<url> must be an absolute http',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'http://u:p@example.com/f'),
      EXIT.usage,
      'must not carry a user name or password',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'http://example.com/f', '--every', '30'),
      EXIT.usage,
      '--every must be a duration',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'http://example.com/f', '--every', '999ms'),
      EXIT.usage,
      '--every must be between 1s and 24h',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'http://example.com/f', '--every', '25h'),
      EXIT.usage,
      '--every must be between 1s and 24h',
    );
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'http://example.com/f', '--urgency', 'urgent'),
      EXIT.usage,
      `--urgency must be one of auto, ${urgencies.join(', ')}`,
    );
    expectCleanFailure(await fns('sources', 'add', 'wire'), EXIT.usage, /missing <url>/);
    expect(JSON.parse((await fns('sources', 'list', '--json')).stdout)).toEqual({ sources: [] });
  }, 60_000);

  it('stores a valid source with its interval and urgency, and refuses the same name twice (exit 1)', async () => {
    const r = await fns(
      'sources',
      'add',
      'wire',
      'https://Example.com/feed.xml',
      '--every',
      '1m30s',
      '--urgency',
      'flash',
      '--json',
    );
    expect(r.code).toBe(EXIT.ok);
    expect(JSON.parse(r.stdout)).toMatchObject({
      name: 'wire',
      url: 'https://example.com/feed.xml',
      every_ms: 90_000,
      urgency: 'flash',
      paused: false,
      last_poll_at: null,
      next_poll_at: null,
    });
    const plain = await fns('sources', 'add', 'other', 'http://example.com/other');
    expect(plain.code).toBe(EXIT.ok);
    expect(plain.stdout).toContain(`every ${formatDuration(SOURCE_EVERY.defaultMs)}, urgency auto`);
    expectCleanFailure(
      await fns('sources', 'add', 'wire', 'http://example.com/again'),
      EXIT.failed,
      'a source named "wire" already exists',
    );
  }, 60_000);
});

describe('a URL longer than 2,048 characters is refused for its length whatever its form, as by fns webhooks add', () => {
  it('fns sources add and fns webhooks add give the same usage error for the same URL', async () => {
    const long = `ftp://example.com/${'a'.repeat(2048)}`;
    expectCleanFailure(await fns('sources', 'add', 'wire', long), EXIT.usage, '<url> is longer than 2048 characters');
    expectCleanFailure(
      await fns('webhooks', 'add', 'acct_x', long),
      EXIT.usage,
      '<url> is longer than 2048 characters',
    );
  });
});

describe('fns sources list tells what each source did', () => {
  it('prints a table with state, interval, last poll, status, counters and next poll; --json the records', async () => {
    const r = await fns('sources', 'list');
    expect(r.code).toBe(EXIT.ok);
    const [head, ...rest] = r.stdout.trimEnd().split('\n');
    expect(head).toMatch(/^NAME\s+STATE\s+EVERY\s+LAST POLL\s+HTTP\s+SEEN\s+INGESTED\s+DEDUP\s+NEXT POLL$/);
    expect(rest).toContain('  https://example.com/feed.xml  (urgency flash)');
    expect(rest.find((l) => l.startsWith('wire '))).toMatch(/^wire\s+active\s+1m30s\s+-\s+-\s+0\s+0\s+0\s+now$/);
    const json = JSON.parse((await fns('sources', 'list', '--json')).stdout);
    expect(json.sources.map((s: { name: string }) => s.name)).toEqual(['wire', 'other']);
    expect(Object.keys(json.sources[0]).sort()).toEqual(
      [
        'created_at',
        'every_ms',
        'failures',
        'items_deduplicated',
        'items_ingested',
        'items_seen',
        'last_error',
        'last_poll_at',
        'last_status',
        'min_interval_ms',
        'name',
        'next_poll_at',
        'paused',
        'url',
        'urgency',
      ].sort(),
    );
  }, 60_000);

  it('shows a failing source with its status, error and next try', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    const rec: SourceRecord = {
      name: 'broken',
      url: 'http://example.com/x',
      everyMs: 30_000,
      urgency: 'auto',
      paused: false,
      createdAt: '2026-11-22T11:00:00.000Z',
      etag: null,
      lastModified: null,
      lastPollAt: '2026-11-22T11:59:50.000Z',
      lastOkAt: null,
      failingSince: '2026-11-22T11:59:40.000Z',
      lastArticleAt: null,
      lastStatus: 503,
      lastError: 'http: HTTP 503 Service Unavailable',
      nextPollAt: '2026-11-22T12:01:00.000Z',
      failures: 2,
      minIntervalMs: null,
      itemsSeen: 4,
      itemsIngested: 3,
      itemsDeduplicated: 1,
    };
    const lines = sourcesTable([rec], now).split('\n');
    expect(lines[1]).toMatch(/^broken\s+failing\(2\)\s+30s\s+10s ago\s+503\s+4\s+3\s+1\s+in 60s$/);
    expect(lines[3]).toBe('  last error: http: HTTP 503 Service Unavailable');
  });
});

describe('fns sources pause, resume and remove', () => {
  it('pause and resume a source; an unknown name is refused (exit 1)', async () => {
    const p = await fns('sources', 'pause', 'wire', '--json');
    expect(JSON.parse(p.stdout)).toMatchObject({ name: 'wire', paused: true });
    expect((await fns('sources', 'list')).stdout).toMatch(/^wire\s+paused\s+.*-$/m);
    const r = await fns('sources', 'resume', 'wire');
    expect(r.stdout).toBe('wire: active (polled within a second)\n');
    expectCleanFailure(await fns('sources', 'pause', 'nope'), EXIT.failed, 'no source named "nope"');
    expectCleanFailure(await fns('sources', 'resume', 'nope'), EXIT.failed, 'no source named "nope"');
  }, 60_000);

  it('remove forgets a source; removing it again is refused', async () => {
    expect((await fns('sources', 'remove', 'other')).code).toBe(EXIT.ok);
    expect(
      JSON.parse((await fns('sources', 'list', '--json')).stdout).sources.map((s: { name: string }) => s.name),
    ).toEqual(['wire']);
    expectCleanFailure(await fns('sources', 'remove', 'other'), EXIT.failed, 'no source named "other"');
  }, 60_000);
});

describe('fns help lists the sources commands', () => {
  it('in the general help and per command', async () => {
    const help = (await fns('--help')).stdout;
    for (const c of ['add <name> <url>', 'list', 'pause <name>', 'resume <name>', 'remove <name>', 'run'])
      expect(help).toContain(`fns sources ${c}`);
    const add = await fns('sources', 'add', '--help');
    expect(add.code).toBe(EXIT.ok);
    expect(add.stdout).toContain('--every: the poll interval, 1s to 24h');
    expectCleanFailure(
      await fns('sources', 'list', '--every', '5s'),
      EXIT.usage,
      'fns sources list does not take --every',
    );
  }, 60_000);
});

describe('durations', () => {
  it('reads units and compounds, writes them back', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1500ms')).toBe(1500);
    expect(() => parseDuration('1.5s')).toThrow(/--every must be a duration/);
    expect(() => parseDuration('s')).toThrow(/--every must be a duration/);
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(1500)).toBe('1500ms');
    expect(formatDuration(60_000)).toBe('1m');
  });
});

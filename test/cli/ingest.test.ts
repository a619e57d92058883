/**
 * `fns articles ingest`: streamed line by line, committed in short transactions of at most 1,000
 * articles so other writers interleave, complete output on a pipe, progress only on a terminal.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { readLines } from '../../src/cli/input.js';
import { ingest, IngestStopped, INGEST_CHUNK } from '../../src/cli/operator.js';
import { Progress } from '../../src/cli/progress.js';
import type { ItemOutcome, SourcedItem } from '../../src/store/ports/index.js';
import { fnsBin, fnsWith, ndjson, tempDataDir } from './support.js';

const data = tempDataDir('fns-ingest-');
afterAll(() => data.remove());

/** An ArticleStore.insert that records each call; `failOnCall` makes that call throw. */
function recordingStore(failOnCall?: number) {
  const calls: { size: number; at: unknown }[] = [];
  let n = 0;
  return {
    calls,
    async ingestItems(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]> {
      calls.push({ size: items.length, at });
      if (calls.length === failOnCall) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      return items.map(() => ({ status: 'stored', id: `id${++n}`, received_at: 'now' }));
    },
  };
}
const lines = (n: number) => ndjson(n).trimEnd().split('\n');

describe('ingest commits in chunks of at most 1,000 articles, each with the clock (read at commit)', () => {
  it('2,500 good lines and a bad one: inserts of 1,000, 1,000 and 500; the bad line reported by its number', async () => {
    const store = recordingStore();
    const input = lines(2500);
    input.splice(1200, 0, '{"content":""}');
    const report = await ingest(store, input, Date.now);
    expect(INGEST_CHUNK).toBe(1000);
    expect(store.calls.map((c) => c.size)).toEqual([1000, 1000, 500]);
    expect(store.calls.every((c) => c.at === Date.now)).toBe(true);
    expect(report).toMatchObject({
      lines: 2501,
      ingested: 2500,
      errors: [{ line: 1201, error: expect.stringContaining('content is required') }],
    });
    expect(report.ids).toHaveLength(2500);
  });
  it('line numbers count blank lines; blank lines are not articles', async () => {
    const report = await ingest(recordingStore(), ['', '{"content":"a"}', '   ', 'nope'], Date.now);
    expect(report).toMatchObject({
      lines: 2,
      ingested: 1,
      errors: [{ line: 4, error: expect.stringMatching(/^not valid JSON/) }],
    });
  });
  it('a store failure stops the ingest and says up to which line the input is done: nothing after it was stored', async () => {
    const input = lines(2500);
    input.splice(1500, 0, 'bad line after the last commit');
    const err = await ingest(recordingStore(2), input, Date.now).catch((e) => e);
    expect(err).toBeInstanceOf(IngestStopped);
    expect(err.doneThroughLine).toBe(1000);
    expect(err.report).toMatchObject({ lines: 1000, ingested: 1000, errors: [] });
    expect(err.reason.code).toBe('SQLITE_BUSY');
  });
});

describe('the input is read as a stream of lines', () => {
  it('splits \\n and \\r\\n, across chunk boundaries and inside multi-byte characters', async () => {
    const stream = new PassThrough();
    const bytes = Buffer.from('{"content":"café"}\r\nsecond\nthird without newline');
    const cut = bytes.indexOf(Buffer.from('é')) + 1; // in the middle of "é"
    stream.write(bytes.subarray(0, cut));
    stream.end(bytes.subarray(cut));
    const out: unknown[] = [];
    for await (const line of readLines(stream)) out.push(line);
    expect(out).toEqual(['{"content":"café"}', 'second', 'third without newline']);
  });
  it('standard input: fns articles ingest -', async () => {
    const r = await fnsWith({ dataDir: data.dir, input: ndjson(3, 'stdin') }, 'articles', 'ingest', '-', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ lines: 3, ingested: 3 });
  });
});

describe('the progress line: on standard error, only when it is a terminal', () => {
  const counts = (lines: number) => ({ lines, ingested: lines, errors: [] });
  it('on a terminal: rewritten in place, at most every 250 ms, cleared before other lines', () => {
    const written: string[] = [];
    let t = 0;
    const p = new Progress({ isTTY: true, write: (s) => written.push(s) }, () => t);
    p.update(counts(10)); // at start: nothing yet
    t = 300;
    p.update(counts(3000));
    t = 400;
    p.update(counts(4000)); // within 250 ms of the last one
    p.note('line 7: bad (skipped)');
    expect(written).toEqual([
      '\r3,000 lines read, 3,000 stored, 0 skipped (10,000 lines/s)\x1b[K',
      '\r\x1b[K',
      'line 7: bad (skipped)\n',
    ]);
  });
  it('not a terminal (a pipe, a log file): no progress line at all', () => {
    const written: string[] = [];
    let t = 0;
    const p = new Progress({ isTTY: false, write: (s) => written.push(s) }, () => t);
    for (t = 0; t < 5000; t += 300) p.update(counts(t));
    p.clear();
    expect(written).toEqual([]);
  });
});

describe('the output is complete on a pipe, however slowly the reader reads', () => {
  it('fns articles ingest --json of 5,000 lines (well over 64 KiB) into a reader that starts a second late', async () => {
    const file = join(data.dir, 'pipe.ndjson');
    writeFileSync(file, ndjson(5000, 'piped'));
    // A real shell pipe: the reader lets the pipe buffer (64 KiB) fill before it reads anything.
    const reader = `setTimeout(() => { let s = ''; process.stdin.setEncoding('utf8').on('data', (d) => (s += d)).on('end', () => console.log(JSON.stringify({ bytes: Buffer.byteLength(s), ids: JSON.parse(s).ids.length }))); }, 1000)`;
    const shell = spawn(
      'sh',
      ['-c', `"${process.execPath}" "${fnsBin}" articles ingest "${file}" --json | "${process.execPath}" -e "$READER"`],
      {
        env: { ...process.env, DATA_DIR: data.dir, READER: reader },
      },
    );
    let out = '';
    let err = '';
    shell.stdout.on('data', (d) => (out += d));
    shell.stderr.on('data', (d) => (err += d));
    const code = await new Promise((resolve) => shell.on('close', resolve));
    expect(err).toBe('');
    expect(code).toBe(0);
    const seen = JSON.parse(out);
    expect(seen.bytes).toBeGreaterThan(64 * 1024);
    expect(seen.ids).toBe(5000);
  });
});

describe('two ingests at once on one DATA_DIR: both succeed, the small one interleaves with the large one', () => {
  it('50,000 lines and 1 line: every line stored, no stack trace', async () => {
    const dir = tempDataDir('fns-concurrent-');
    try {
      const big = join(dir.dir, 'big.ndjson');
      const small = join(dir.dir, 'small.ndjson');
      writeFileSync(big, ndjson(50_000, 'big'));
      writeFileSync(small, '{"content":"the small one"}\n');
      expect((await dir.fns('keys', 'list')).code).toBe(0); // the database exists before either starts
      const db = new Database(join(dir.dir, 'fns.sqlite'), { readonly: true });
      const count = () => (db.prepare('SELECT count(*) AS n FROM articles').get() as { n: number }).n;

      const large = dir.fns('articles', 'ingest', big, '--json');
      // The small one starts once the large one has committed its first chunk.
      await until(() => count() > 0, 'the first chunk of the large ingest', 60_000, 20);
      const one = await dir.fns('articles', 'ingest', small, '--json');
      const many = await large;

      for (const r of [one, many]) expect(r.stderr).not.toMatch(/^\s+at /m);
      expect([one.code, many.code]).toEqual([0, 0]);
      const smallId = JSON.parse(one.stdout).ids[0];
      const bigIds: string[] = JSON.parse(many.stdout).ids;
      expect(bigIds).toHaveLength(50_000);
      expect(count()).toBe(50_001);
      // Committed between two chunks of the large ingest, not after all of it.
      expect(smallId > bigIds[0]! && smallId < bigIds.at(-1)!).toBe(true);
      db.close();
    } finally {
      dir.remove();
    }
  }, 180_000);
});

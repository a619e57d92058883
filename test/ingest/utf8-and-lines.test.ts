/**
 * The CLI line reader is linear in its input and refuses an over-long line by itself;
 * one rule for bytes that are not UTF-8 and for lone surrogates on every path (CLI, push, feed poller).
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/cli/operator.js';
import { readLines, type InputLine } from '../../src/cli/input.js';
import { parseArticle } from '../../src/ingest/parse.js';
import { invalidUtf8Offset, loneSurrogatePath } from '../../src/ingest/utf8.js';
import { PushBodyError, readPushBody, readPushLine } from '../../src/ops/push.js';
import { decodeFeedBytes } from '../../src/sources/feed/charset.js';
import { FeedError } from '../../src/sources/feed/errors.js';

const chunked = (bytes: Buffer, size = 64 * 1024) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
    })(),
    { objectMode: true },
  );

async function collect(stream: Readable, opts: Parameters<typeof readLines>[1] = {}): Promise<InputLine[]> {
  const out: InputLine[] = [];
  for await (const l of readLines(stream, opts)) out.push(l);
  return out;
}

describe('the CLI line reader is linear: each byte copied at most once', () => {
  it('a 900 KB line in 64 KiB chunks is assembled with exactly its own length copied (re-splitting copied it ~14 times over)', async () => {
    const long = JSON.stringify({ content: 'a'.repeat(900_000) });
    const stats = { bytesCopied: 0 };
    const lines = await collect(chunked(Buffer.from(`${long}\n{"content":"next"}\n`)), { stats });
    expect(lines).toEqual([long, '{"content":"next"}']);
    expect(stats.bytesCopied).toBe(Buffer.byteLength(long));
  });
  it('a 5 MB line over the 1 MiB cap is refused in its place, nothing of it kept, and the next line is read', async () => {
    const stats = { bytesCopied: 0 };
    const input = Buffer.from(`{"content":"first"}\n${'x'.repeat(5_000_000)}\n{"content":"third"}`);
    const lines = await collect(chunked(input), { stats });
    expect(lines[0]).toBe('{"content":"first"}');
    expect(lines[1]).toMatchObject({ refused: expect.stringContaining('line limit') });
    expect(lines[2]).toBe('{"content":"third"}');
    // Only the short lines that span a chunk boundary are joined; nothing of the refused one.
    expect(stats.bytesCopied).toBeLessThanOrEqual(2 * 19);
  });
  it('fns articles ingest reports the over-long line by its number and stores the others', async () => {
    const input = Buffer.from(
      `{"content":"Acme beats estimates"}\n${'y'.repeat(2_000_000)}\n{"content":"Zeta recalls cars"}\n`,
    );
    const fake = {
      ingestItems: async (a: unknown[]) =>
        a.map((_, i) => ({ status: 'stored' as const, id: `id-${i}`, received_at: '2026-11-24T00:00:00Z' })),
    };
    const report = await ingest(fake, readLines(chunked(input)), () => 0);
    expect(report.ingested).toBe(2);
    expect(report.errors).toEqual([{ line: 2, error: expect.stringContaining('line limit') }]);
  });
});

describe('a UTF-8 byte order mark before the first line is no part of it, on every path', () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  const input = Buffer.concat([
    bom,
    Buffer.from('{"content":"Acme beats estimates"}\n{"content":"Zeta recalls cars"}\n'),
  ]);
  it('CLI: the first line is read without it (a file saved with a signature), whatever the chunks', async () => {
    for (const size of [1, 2, 64 * 1024]) {
      const lines = await collect(chunked(input, size));
      expect(lines).toEqual(['{"content":"Acme beats estimates"}', '{"content":"Zeta recalls cars"}']);
    }
    const fake = {
      ingestItems: async (a: unknown[]) =>
        a.map((_, i) => ({ status: 'stored' as const, id: `id-${i}`, received_at: '2026-11-24T00:00:00Z' })),
    };
    const report = await ingest(fake, readLines(chunked(input)), () => 0);
    expect(report.errors).toEqual([]);
    expect(report.ingested).toBe(2);
  });
  it('push (NDJSON): its first line is read without it too', async () => {
    const lines = await readPushBody(
      Buffer.concat([bom, Buffer.from('{"source":"desk","id":"1","content":"Acme beats estimates"}\n')]),
      'ndjson',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toHaveProperty('error');
  });
});

describe('bytes that are not UTF-8 are refused, naming the line, on every path', () => {
  const bad = Buffer.concat([Buffer.from('{"content":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
  it('CLI: the line is refused (never stored as U+FFFD) and the next one read', async () => {
    const input = Buffer.concat([Buffer.from('{"content":"ok"}\n'), bad, Buffer.from('\n{"content":"café"}\n')]);
    const fake = {
      ingestItems: async (a: unknown[]) =>
        a.map((_, i) => ({ status: 'stored' as const, id: `id-${i}`, received_at: '2026-11-24T00:00:00Z' })),
    };
    const report = await ingest(fake, readLines(chunked(input, 7)), () => 0);
    expect(report.errors).toEqual([
      { line: 2, error: expect.stringMatching(/^not valid UTF-8 \(byte 0xe9 at byte 16 of the line\)/) },
    ]);
    expect(report.ingested).toBe(2);
  });
  it('push (NDJSON): that line is `invalid` with its number, the others go on (it was a 400 for the whole body)', async () => {
    const body = Buffer.concat([
      Buffer.from('{"source":"desk","id":"1","content":"ok"}\n'),
      Buffer.from('{"source":"desk","id":"2","content":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}\n'),
    ]);
    const lines = await readPushBody(body, 'ndjson');
    expect(lines[0]).toMatchObject({ line: 1, item: expect.anything() });
    expect(lines[1]).toEqual({ line: 2, error: expect.stringMatching(/^not valid UTF-8/) });
  });
  it('push (JSON array): no line structure to keep, so the body is refused, naming its line', async () => {
    const body = Buffer.concat([
      Buffer.from('[\n{"source":"desk","id":"1","content":"caf'),
      Buffer.from([0xff]),
      Buffer.from('"}]'),
    ]);
    await expect(readPushBody(body, 'json')).rejects.toThrow(PushBodyError);
    await expect(readPushBody(body, 'json')).rejects.toThrow(/line 2/);
  });
  it('feed: UTF-8 text with a bad byte is refused (FeedError charset) naming the line; a Windows-1252 feed mislabelled as UTF-8 is still read', () => {
    const feed = Buffer.concat([
      Buffer.from('<rss version="2.0"><channel>\n<item><title>Café crème</title></item>\n<item><title>x'),
      Buffer.from([0xe9]),
      Buffer.from('</title></item></channel></rss>'),
    ]);
    let err: unknown;
    try {
      decodeFeedBytes(feed, 'application/rss+xml; charset=utf-8');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FeedError);
    expect((err as FeedError).kind).toBe('charset');
    expect((err as FeedError).message).toMatch(/line 3/);
    const latin = Buffer.from(
      '<rss version="2.0"><channel><item><title>Caf\u00e9</title></item></channel></rss>',
      'latin1',
    );
    expect(decodeFeedBytes(latin, 'application/rss+xml; charset=utf-8').text).toContain('Café');
  });
  it('invalidUtf8Offset: overlong forms, surrogates encoded in UTF-8 and truncated sequences are invalid', () => {
    expect(invalidUtf8Offset(Buffer.from('héllo €'))).toBe(-1);
    expect(invalidUtf8Offset(Buffer.from([0x61, 0xc0, 0xaf]))).toBe(1);
    expect(invalidUtf8Offset(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0);
    expect(invalidUtf8Offset(Buffer.from([0x61, 0xe2, 0x82]))).toBe(1);
  });
});

describe('a lone surrogate escape is refused (it was stored as three U+FFFD)', () => {
  it('CLI / parseArticle: content "\\ud800" is refused, naming the field; a real pair is fine', () => {
    expect(parseArticle(JSON.parse('{"content":"Acme \\ud800 beats"}'))).toEqual({
      ok: false,
      error: expect.stringMatching(/^content holds a lone surrogate/),
    });
    expect(parseArticle(JSON.parse('{"content":"Acme \\ud83d\\ude80 beats"}'))).toMatchObject({ ok: true });
  });
  it('push: any field (id, title, tickers) with a lone surrogate makes the line invalid', () => {
    expect(readPushLine(JSON.parse('{"source":"desk","id":"a\\udc00","content":"ok"}'))).toEqual({
      error: expect.stringMatching(/^id holds a lone surrogate/),
    });
    expect(readPushLine(JSON.parse('{"source":"desk","id":"a","title":"\\ud800"}'))).toEqual({
      error: expect.stringMatching(/^title holds/),
    });
    expect(loneSurrogatePath({ tickers: [{ ticker: '\udfff' }] })).toBe('tickers[0].ticker');
  });
});

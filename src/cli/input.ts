/** The ingestion input, read as a stream of lines: a large file or pipe is never held in memory whole. */
import { fstatSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { decodeUtf8, invalidUtf8Offset, notUtf8Message } from '../ingest/utf8.js';
import { CliError } from './errors.js';

/**
 * Opens `<file>` or `-` (standard input). A missing, unreadable or wrong file fails here, before anything is stored.
 */
export async function openInput(file: string): Promise<Readable> {
  if (file === '-') {
    // Node reads a directory on standard input as an empty stream: refused as a directory given by name is.
    if (fstatSync(0).isDirectory())
      throw new CliError(
        'standard input is a directory (give an NDJSON file, or - with a file or pipe on standard input)',
      );
    return process.stdin;
  }
  const handle = await open(file, 'r');
  if ((await handle.stat()).isDirectory()) {
    await handle.close();
    throw new CliError(`${file}: is a directory (give an NDJSON file, or - for standard input)`);
  }
  return handle.createReadStream();
}

/**
 * Bytes a line may hold, without its end of line: far more than the longest article; a longer line is skipped, not
 * kept.
 */
const INGEST_LINE_MAX_BYTES = 1024 * 1024;

/** A line, or one the reader refuses (too long, not UTF-8) in its place, so that it keeps its line number. */
export type InputLine = string | { refused: string };

export interface ReadLinesOptions {
  maxBytes?: number;
  /** Bytes copied to assemble lines (tests: the reader is linear in its input). */
  stats?: { bytesCopied: number };
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * The lines of a byte stream as strict UTF-8; one not UTF-8 or over `maxBytes` is refused and reading goes
 * on. Each byte is copied at most once: linear time, memory bounded by `maxBytes` plus a chunk.
 */
export async function* readLines(
  stream: AsyncIterable<string | Uint8Array>,
  opts: ReadLinesOptions = {},
): AsyncGenerator<InputLine> {
  const max = opts.maxBytes ?? INGEST_LINE_MAX_BYTES;
  let parts: Uint8Array[] = [];
  let length = 0;
  let tooLong = false;
  let first = true;
  const finish = (last: Uint8Array): InputLine => {
    const atStart = first;
    first = false;
    const total = length + last.length;
    const refused = tooLong || total > max;
    const earlier = parts;
    parts = [];
    length = 0;
    tooLong = false;
    if (refused)
      return {
        refused: `longer than the ${max}-byte line limit (an article is one short JSON object per line); skipped`,
      };
    let line = last;
    if (earlier.length > 0) {
      line = Buffer.concat([...earlier, last], total);
      if (opts.stats) opts.stats.bytesCopied += total;
    }
    // A byte order mark is no part of the first line (as the admin push reads its body).
    if (atStart && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) line = line.subarray(3);
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    return decodeUtf8(line) ?? { refused: notUtf8Message(line, invalidUtf8Offset(line)) };
  };
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let pos = 0;
    for (;;) {
      const nl = bytes.indexOf(LF, pos);
      if (nl === -1) {
        const rest = bytes.subarray(pos);
        if (rest.length === 0) break;
        if (!tooLong) {
          length += rest.length;
          if (length > max) {
            // Over the limit: what was kept goes, the rest of the line is only scanned for its end.
            tooLong = true;
            parts = [];
          } else {
            parts.push(rest);
          }
        }
        break;
      }
      yield finish(bytes.subarray(pos, nl));
      pos = nl + 1;
    }
  }
  if (length > 0 || tooLong) yield finish(new Uint8Array(0));
}

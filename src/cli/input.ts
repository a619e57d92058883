/** The ingestion input, read as a stream of lines: a large file or pipe is never held in memory whole. */
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { CliError } from './errors.js';

/** Opens `<file>` or `-` (standard input). A missing, unreadable or wrong file fails here, before anything is stored. */
export async function openInput(file: string, stdin: Readable = process.stdin): Promise<Readable> {
  if (file === '-') return stdin;
  const handle = await open(file, 'r');
  if ((await handle.stat()).isDirectory()) {
    await handle.close();
    throw new CliError(`${file}: is a directory (give an NDJSON file, or - for standard input)`);
  }
  return handle.createReadStream();
}

/** The lines of a UTF-8 stream, without their `\n` or `\r\n`; a read error rejects the iteration. */
export async function* readLines(stream: AsyncIterable<string | Buffer> & { setEncoding?(e: BufferEncoding): unknown }): AsyncGenerator<string> {
  stream.setEncoding?.('utf8');
  let rest = '';
  for await (const chunk of stream) {
    const text = rest + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const parts = text.split('\n');
    rest = parts.pop()!;
    for (const line of parts) yield line.endsWith('\r') ? line.slice(0, -1) : line;
  }
  if (rest !== '') yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
}

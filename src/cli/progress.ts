/**
 * The progress line of a long ingest: on a terminal only (never a pipe or a log), rewritten at most every EVERY_MS.
 */
import { printable } from '../domain/printable.js';

export interface ProgressCounts {
  lines: number;
  ingested: number;
  errors: readonly unknown[];
}

export interface TextOut {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** The progress line is rewritten at most this often. */
const EVERY_MS = 250;

const n = (x: number) => x.toLocaleString('en-US');

function progressText(p: ProgressCounts, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? Math.round((p.lines * 1000) / elapsedMs) : 0;
  return `${n(p.lines)} lines read, ${n(p.ingested)} stored, ${n(p.errors.length)} skipped (${n(rate)} lines/s)`;
}

export class Progress {
  private readonly enabled: boolean;
  private readonly started: number;
  private last: number;
  private shown = false;

  constructor(
    private readonly out: TextOut,
    private readonly clock: () => number = Date.now,
  ) {
    this.enabled = out.isTTY === true;
    this.started = clock();
    this.last = this.started;
  }

  update(p: ProgressCounts): void {
    if (!this.enabled) return;
    const t = this.clock();
    if (t - this.last < EVERY_MS) return;
    this.last = t;
    this.out.write(`\r${progressText(p, t - this.started)}\x1b[K`);
    this.shown = true;
  }

  /** A whole line without garbling the progress line; it may quote the input, so it is escaped to one line. */
  note(line: string): void {
    this.clear();
    this.out.write(`${printable(line)}\n`);
  }

  /** Removes the progress line (before the final report). */
  clear(): void {
    if (!this.shown) return;
    this.out.write('\r\x1b[K');
    this.shown = false;
  }
}

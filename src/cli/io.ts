/** What every command of `fns` is given, prints through and opens its store with. */
import type { Config } from '../config/index.js';
import { printableLines } from '../domain/printable.js';
import type { Store, StoreTx } from '../store/ports/index.js';
import type { OptionName } from './commands.js';

/** Every line goes through `printableLines`: no control character reaches the terminal. */
export function out(text: string): void {
  process.stdout.write(`${printableLines(text)}\n`);
}
export function err(text: string): void {
  process.stderr.write(`${printableLines(text)}\n`);
}

/** One command line as its handler receives it. */
export interface CommandRun {
  args: string[];
  json: boolean;
  /** A string option's value; undefined when it is not given. */
  option: (name: OptionName) => string | undefined;
  config: Config;
  /** The clock when the command started. */
  now: number;
  /** `data` as one JSON document (through `printableJson`) with --json, else `human`. */
  print: (data: unknown, human: string) => void;
}

/** The exit code, or 'running' for a service that stops on a signal. */
export type Handler = (run: CommandRun) => Promise<number | 'running'>;

/** The store factory, and with it the SQLite driver: loaded by the commands that open a store, not by `fns --help`. */
export const storeFactory = () => import('../store/index.js');

/** The store of this deployment: the SQLite file under DATA_DIR, or PostgreSQL when DATABASE_URL is set. */
export async function openStore(config: Config, role: 'cli' | 'service' = 'cli'): Promise<Store> {
  return (await storeFactory()).openStore(config, { role, postgres: { schema: config.databaseSchema } });
}

/**
 * Runs `fn` on the store and closes it; with `write`, in one transaction (all of it stored or nothing), waiting for the
 * write lock first.
 */
export async function withStore<T>(
  config: Config,
  fn: (store: StoreTx) => Promise<T>,
  opts = { write: false },
): Promise<T> {
  const store = await openStore(config);
  try {
    return opts.write ? await store.transaction(fn) : await fn(store);
  } finally {
    await store.close();
  }
}

/** Columns padded to their widest cell, two spaces apart, without trailing blanks; each row's `details` lines under it. */
export function table(head: string[], rows: { cells: string[]; details: string[] }[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r.cells[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.flatMap((r) => [line(r.cells), ...r.details])].join('\n');
}

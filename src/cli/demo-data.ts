/**
 * Where `fns demo` keeps its data (DATA_DIR/demo), and the hint a data command prints when it is about
 * to create a new, empty store beside a demo's: `npx fns sources add …` typed without DATA_DIR would
 * otherwise write to a store the running demo never reads.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const DEMO_SUBDIR = 'demo';

/** The demo's data directory under a DATA_DIR. */
export function demoDataDir(dataDir: string): string {
  return join(dataDir, DEMO_SUBDIR);
}

/**
 * The note for a data command on the SQLite store `file` under `dataDir`: undefined unless that store
 * does not exist yet while a demo's store does.
 */
export function demoHint(dataDir: string, file: string, storeFileName: string, command: string): string | undefined {
  const demo = demoDataDir(dataDir);
  if (existsSync(file) || !existsSync(join(demo, storeFileName))) return undefined;
  return `fns: ${file} does not exist yet and is created now; the demo's data is in ${demo}. To work on the running demo: DATA_DIR=${demo} npx fns ${command} …`;
}

/**
 * Where `fns demo` keeps its data, and the hint for a command about to create an empty store the running demo never
 * reads.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';

const DEMO_SUBDIR = 'demo';

/** The demo's data directory under a DATA_DIR. */
export function demoDataDir(dataDir: string): string {
  return join(dataDir, DEMO_SUBDIR);
}

/** The note for a data command on store `file`: only when that store does not exist yet while a demo's does. */
export function demoHint(dataDir: string, file: string, command: string): string | undefined {
  const demo = demoDataDir(dataDir);
  if (existsSync(file) || !existsSync(join(demo, basename(file)))) return undefined;
  return `fns: ${file} does not exist yet and is created now; the demo's data is in ${demo}. To work on the running demo: DATA_DIR=${demo} npx fns ${command} …`;
}

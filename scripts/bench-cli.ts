/**
 * CLI start-up benchmark (against the CLI start-up goal): how long `fns` takes from spawn to exit for
 * `fns --help`, `fns keys create` and `fns articles ingest` (one line), each next to `node -e 0` (the
 * floor: Node itself) and to the sources run through tsx (how bin/fns.mjs started before the bundle, and
 * what it falls back to), all in this one run; which packages each command loads; and the cost of the
 * first run after a source change (a cold bundle build).
 *
 *   npx tsx scripts/bench-cli.ts [--runs=15]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const runs = Number(arg('runs', '15'));

const dir = mkdtempSync(join(tmpdir(), 'fns-bench-cli-'));
const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir };
delete env.DATABASE_URL;
const line = `${JSON.stringify({ content: 'FLASH: bench-cli start-up' })}\n`;

interface Command {
  name: string;
  args: string[];
  input?: string;
}
const commands: Command[] = [
  { name: 'fns --help', args: ['--help'] },
  { name: 'fns keys create --tier pro', args: ['keys', 'create', '--tier', 'pro'] },
  { name: 'fns articles ingest - (1 line)', args: ['articles', 'ingest', '-'], input: line },
];
const bundled = (c: Command) => [join(repoRoot, 'bin', 'fns.mjs'), ...c.args];
const viaTsx = (c: Command) => ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts'), ...c.args];

function once(args: string[], input = ''): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, input, stdio: ['pipe', 'ignore', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr.toString()}`);
  return ms;
}

/** Median and 90th percentile of `runs` runs, the variants interleaved so that load changes hit all alike. */
function measure(
  variants: { label: string; args: string[]; input?: string }[],
): Map<string, { p50: number; p90: number }> {
  const times = new Map<string, number[]>(variants.map((v) => [v.label, []]));
  for (const v of variants) once(v.args, v.input); // warm: the bundle is built, tsx's cache filled
  for (let r = 0; r < runs; r++) for (const v of variants) times.get(v.label)!.push(once(v.args, v.input));
  const out = new Map<string, { p50: number; p90: number }>();
  for (const [label, t] of times) {
    t.sort((a, b) => a - b);
    out.set(label, { p50: t[Math.floor(t.length / 2)]!, p90: t[Math.min(t.length - 1, Math.floor(t.length * 0.9))]! });
  }
  return out;
}

/** The packages (from node_modules) a command loads, recorded by a resolve hook in a separate run. */
function packagesLoaded(c: Command): string[] {
  const record = join(dir, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/.][^/]*)\\//.exec(r.url);
  const parent = context.parentURL ?? '';
  // Ours: the sources, bin/ and the CLI bundle (node_modules/.cache/fns-cli); not a package's own imports.
  const ours = !parent.includes('/node_modules/') || parent.includes('/node_modules/.cache/');
  if (m && ours) appendFileSync(${JSON.stringify(record)}, m[1] + '\\n');
  return r;
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  writeFileSync(record, '');
  once(['--import', pathToFileURL(register).href, ...bundled(c)], c.input);
  // CommonJS packages are loaded by require inside other packages; the hook sees what our code imports.
  return [...new Set(readFileSync(record, 'utf8').split('\n').filter(Boolean))].sort();
}

async function coldBuild(): Promise<number> {
  const { cliBundle } = (await import(pathToFileURL(join(repoRoot, 'bin', 'cli-bundle.mjs')).href)) as {
    cliBundle: (o?: { cacheDir?: string }) => Promise<string | undefined>;
  };
  const cacheDir = join(dir, 'cold-cache');
  const t0 = performance.now();
  const url = await cliBundle({ cacheDir });
  const ms = performance.now() - t0;
  if (!url) throw new Error('the CLI bundle could not be built (esbuild missing?)');
  return ms;
}

try {
  console.log(`bench-cli: ${runs} runs of each command (spawn to exit), interleaved; DATA_DIR ${dir}`);
  once(bundled(commands[0]!)); // the bundle of the current sources exists before anything is timed
  const variants = [{ label: 'node -e 0', args: ['-e', '0'] }];
  for (const c of commands) {
    variants.push({ label: `${c.name} | bundle`, args: bundled(c), ...(c.input ? { input: c.input } : {}) });
    variants.push({ label: `${c.name} | tsx`, args: viaTsx(c), ...(c.input ? { input: c.input } : {}) });
  }
  const m = measure(variants);
  const floor = m.get('node -e 0')!;
  const rows: string[][] = [
    ['command', 'bundle p50', 'bundle p90', 'tsx (before) p50', 'bundle / tsx', 'above node -e 0', 'packages it loads'],
  ];
  for (const c of commands) {
    const b = m.get(`${c.name} | bundle`)!;
    const t = m.get(`${c.name} | tsx`)!;
    rows.push([
      c.name,
      `${b.p50.toFixed(0)} ms`,
      `${b.p90.toFixed(0)} ms`,
      `${t.p50.toFixed(0)} ms`,
      `${(b.p50 / t.p50).toFixed(2)}x`,
      `+${(b.p50 - floor.p50).toFixed(0)} ms`,
      packagesLoaded(c).join(', ') || '(none)',
    ]);
  }
  rows.push(['node -e 0 (floor)', `${floor.p50.toFixed(0)} ms`, `${floor.p90.toFixed(0)} ms`, '', '', '', '']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log('');
  for (const [k, r] of rows.entries()) {
    console.log(r.map((c, i) => c.padEnd(widths[i]!)).join(' | '));
    if (k === 0) console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  }
  console.log(
    `\nfirst run after a source change: the bundle is rebuilt in ${(await coldBuild()).toFixed(0)} ms (once, then cached)`,
  );
  console.log(
    'goal: every command loads only what it uses (no server packages such as express for data commands, no SQLite driver for --help);',
  );
  console.log('      fns articles ingest start -> stream receipt p50 <= 150 ms is measured by npm run bench:stream.');
} finally {
  rmSync(dir, { recursive: true, force: true });
}

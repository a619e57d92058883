// The command line's fast start: src/cli/main.ts and what it imports from src/, bundled by esbuild into
// node_modules/.cache/fns-cli/ (packages stay external, so Node loads them from node_modules as usual;
// dynamic imports become chunks, so a command still loads only what it uses). Built on the first run
// after `npm ci`, rebuilt on the first run after a source changes: the check compares the size and
// mtime of every file of the last build (about 70 stat calls, well under a millisecond).
//
// Plain JavaScript on purpose: it runs before any TypeScript loader. Anything that stops it from
// giving a bundle (esbuild missing, a read-only checkout, a build error) returns undefined and
// bin/fns.mjs runs the sources through tsx instead, which then reports a real error the usual way.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Bump when the build options below change: every cached bundle is then rebuilt. */
const BUILD_FORMAT = 2;
const projectRoot = fileURLToPath(new URL('..', import.meta.url));
/**
 * Older builds are removed once this old. A process loads its chunks while it starts (the dynamic imports
 * of main.ts and the store factory run before a command does its work), so a running `fns serve` never
 * needs its build directory again after its first seconds.
 */
const KEEP_OLD_MS = 10 * 60_000;

/**
 * The file URL of the up-to-date bundle entry, building it when needed; undefined when there is none
 * (the caller falls back to tsx). The options are for tests and benchmarks; `fns` uses the defaults.
 *
 * @param {{ root?: string, entry?: string, cacheDir?: string, alsoWatched?: string[] }} [options]
 * @returns {Promise<string | undefined>}
 */
export async function cliBundle(options = {}) {
  const root = options.root ?? projectRoot;
  const cacheDir = options.cacheDir ?? join(root, 'node_modules', '.cache', 'fns-cli');
  const at = {
    root,
    entry: options.entry ?? 'src/cli/main.ts',
    cacheDir,
    manifestPath: join(cacheDir, 'manifest.json'),
    // Not modules of the bundle, but they change what esbuild makes of them.
    alsoWatched: options.alsoWatched ?? ['tsconfig.json', 'bin/cli-bundle.mjs'],
  };
  try {
    return fresh(at) ?? (await build(at));
  } catch {
    return undefined;
  }
}

/** The size and mtime of a file, as recorded in the manifest; null when it is gone. */
function stamp(root, rel) {
  const s = statSync(join(root, rel), { throwIfNoEntry: false });
  return s ? [s.size, s.mtimeMs] : null;
}

function fresh({ root, cacheDir, manifestPath }) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch {
    return undefined;
  }
  if (manifest.format !== BUILD_FORMAT || manifest.root !== root || typeof manifest.entry !== 'string')
    return undefined;
  for (const [rel, recorded] of Object.entries(manifest.files)) {
    const now = stamp(root, rel);
    if (!now || now[0] !== recorded[0] || now[1] !== recorded[1]) return undefined;
  }
  return pathToFileURL(join(cacheDir, manifest.entry)).href;
}

/** esbuild from the project, else the copy tsx depends on (it is there whenever tsx is). */
async function loadEsbuild() {
  const require = createRequire(import.meta.url);
  for (const from of [
    () => require.resolve('esbuild'),
    () => createRequire(require.resolve('tsx/package.json')).resolve('esbuild'),
  ]) {
    try {
      return await import(pathToFileURL(from()).href);
    } catch {
      /* try the next place */
    }
  }
  return undefined;
}

/**
 * Every module keeps its own `import.meta.url` (the contract, the demo's sample file and the embedder's
 * worker are found relative to their source file): rewritten to the source file's URL.
 */
function ownImportMeta() {
  return {
    name: 'own-import-meta',
    setup(b) {
      b.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta')) return undefined;
        // The source file's absolute URL, not one relative to the bundle: Node resolves the bundle by its
        // real path, so through a symlinked node_modules (a second checkout sharing it) a relative URL
        // would point into the other checkout. The manifest records the root, so a moved checkout rebuilds.
        const url = JSON.stringify(pathToFileURL(args.path).href);
        const contents = source
          .replaceAll('import.meta.url', `(${url})`)
          .replaceAll('import.meta.filename', JSON.stringify(args.path))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)));
        return { contents, loader: 'ts' };
      });
    },
  };
}

async function build({ root, entry, cacheDir, manifestPath, alsoWatched }) {
  const esbuild = await loadEsbuild();
  if (!esbuild) return undefined;
  mkdirSync(cacheDir, { recursive: true });
  const name = `b-${Date.now().toString(36)}-${process.pid}`;
  const outdir = join(cacheDir, name);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { main: entry },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [ownImportMeta()],
  });
  const files = {};
  for (const rel of [...Object.keys(result.metafile.inputs), ...alsoWatched]) {
    const s = stamp(root, rel);
    if (s) files[rel] = s;
  }
  // Written whole, then renamed: a concurrent `fns` reads the previous manifest or this one.
  const tmp = `${manifestPath}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ format: BUILD_FORMAT, root, entry: `${name}/main.mjs`, files }));
  renameSync(tmp, manifestPath);
  prune(cacheDir, name);
  return pathToFileURL(join(outdir, 'main.mjs')).href;
}

function prune(cacheDir, keep) {
  const now = Date.now();
  for (const d of readdirSync(cacheDir)) {
    if (d === keep || !d.startsWith('b-')) continue;
    try {
      if (now - statSync(join(cacheDir, d)).mtimeMs > KEEP_OLD_MS)
        rmSync(join(cacheDir, d), { recursive: true, force: true });
    } catch {
      /* another process removed it */
    }
  }
}

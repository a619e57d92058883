/**
 * The command line's bundle cache (bin/cli-bundle.mjs): built once, reused while no source changed,
 * rebuilt when one did, every module keeping its own import.meta.url; nothing (so bin/fns.mjs falls back
 * to tsx) when the sources do not build.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/specs.js';

type CliBundle = (o: {
  root: string;
  entry: string;
  cacheDir: string;
  alsoWatched: string[];
}) => Promise<string | undefined>;
const { cliBundle } = (await import(pathToFileURL(join(repoRoot, 'bin', 'cli-bundle.mjs')).href)) as {
  cliBundle: CliBundle;
};

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function project() {
  const root = mkdtempSync(join(tmpdir(), 'fns-bundle-'));
  dirs.push(root);
  mkdirSync(join(root, 'src', 'lib'), { recursive: true });
  writeFileSync(
    join(root, 'src', 'main.ts'),
    "export { word, where } from './lib/dep.js';\nexport const here: string = import.meta.url;\n",
  );
  const dep = (word: string) =>
    writeFileSync(
      join(root, 'src', 'lib', 'dep.ts'),
      `export const word: string = '${word}';\nexport const where = new URL('./data.txt', import.meta.url).href;\n`,
    );
  dep('one');
  const opts = { root, entry: 'src/main.ts', cacheDir: join(root, 'cache'), alsoWatched: [] };
  return { root, dep, build: () => cliBundle(opts) };
}

describe('CLI bundle cache: rebuilt exactly when a source changed', () => {
  it('builds, then reuses the build while nothing changed', async () => {
    const p = project();
    const first = await p.build();
    expect(first).toBeDefined();
    expect((await import(first!)).word).toBe('one');
    expect(await p.build()).toBe(first);
  });

  it('rebuilds after an imported module changed, and runs the new code', async () => {
    const p = project();
    const first = await p.build();
    p.dep('two, changed');
    const second = await p.build();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect((await import(second!)).word).toBe('two, changed');
  });

  it('keeps every module its own import.meta.url (files found beside their source, not the bundle)', async () => {
    const p = project();
    const m = await import((await p.build())!);
    expect(m.here).toBe(pathToFileURL(join(p.root, 'src', 'main.ts')).href);
    expect(m.where).toBe(pathToFileURL(join(p.root, 'src', 'lib', 'data.txt')).href);
  });

  it('gives nothing when the sources do not build, so fns runs them through tsx (which reports the error)', async () => {
    const p = project();
    writeFileSync(join(p.root, 'src', 'lib', 'dep.ts'), 'export const word: string = ;\n');
    expect(await p.build()).toBeUndefined();
  });
});

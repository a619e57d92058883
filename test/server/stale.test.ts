/**
 * A spec edited without `npm run generate` must not silently change nothing: the command line
 * and the service refuse to start on a stale generated/, naming the command. Run on a copy of the
 * checkout whose openapi.yaml is edited.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/specs.js';

let copy: string;
beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'fns-stale-'));
  for (const entry of [
    'bin',
    'src',
    'generated',
    'fixtures',
    'package.json',
    'openapi.yaml',
    'asyncapi.yaml',
    'tsconfig.json',
  ]) {
    cpSync(join(repoRoot, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const fns = (...args: string[]) =>
  spawnSync(process.execPath, [join(copy, 'bin', 'fns.mjs'), ...args], {
    env: { ...process.env, DATA_DIR: join(copy, 'data') },
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('a stale generated/ is refused at start', () => {
  it('runs while generated/ matches the specs', () => {
    const r = fns('keys', 'list', '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.each(['keys list', 'serve --port 0'])(
    'refuses `fns %s` once openapi.yaml changed, naming npm run generate',
    (line) => {
      appendFileSync(join(copy, 'openapi.yaml'), '\n# an edit without npm run generate\n');
      const r = fns(...line.split(' '));
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('openapi.yaml has changed since generated/ was built: run `npm run generate`');
      expect(r.stderr).not.toMatch(/^\s+at /m);
    },
  );
});

/**
 * Nothing the project relies on runs at install time: `npx fns` from the checkout works under the
 * repository's strict install-script policy (.npmrc), as the README tells operators.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/specs.js';

describe('install scripts', () => {
  it('the project itself has none (npx would refuse them under strict-allow-scripts)', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish'].filter(
      (s) => pkg.scripts[s] !== undefined,
    );
    expect(lifecycle).toEqual([]);
  });

  it('`npx fns --help` runs from the checkout as the README shows', () => {
    const r = spawnSync('npx', ['fns', '--help'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr.replace(/^npm warn .*\n/gm, '')).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: fns');
  });
});

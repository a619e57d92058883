/**
 * The validator's route matchers are compiled once (src/http/route-matchers.ts, until upstream releases
 * its own cache), and nothing the project relies on runs at install time: `npx fns` from the checkout
 * works under the repository's strict install-script policy (.npmrc), as the README tells operators.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheValidatorRouteMatchers } from '../../src/http/route-matchers.js';
import { repoRoot } from '../support/specs.js';
import { startTestService, get } from '../support/service.js';

describe('the validator compiles each route matcher once', () => {
  it('is in place once an app is built, and the app still routes and validates', async () => {
    const svc = await startTestService();
    // Read the module the validator loads, without memoising it here: building the app must have.
    const require = createRequire(import.meta.url);
    const validatorsOwn = createRequire(require.resolve('express-openapi-validator'))('path-to-regexp');
    expect(validatorsOwn.pathToRegexp.memoised).toBe(true);
    try {
      const { key } = await svc.key('max');
      expect((await get(svc.port, '/v1/news?limit=1', { key })).status).toBe(200);
      expect((await get(svc.port, '/v1/news?limit=0', { key })).status).toBe(400);
      expect((await get(svc.port, '/v1/News', { key })).status).toBe(404);
    } finally {
      await svc.close();
    }
  });
  it('returns the same compiled matcher for the same route and options', () => {
    const mod = cacheValidatorRouteMatchers();
    const a = mod.pathToRegexp('/v1/news', { sensitive: true, strict: true });
    expect(mod.pathToRegexp('/v1/news', { sensitive: true, strict: true })).toBe(a);
    expect(mod.pathToRegexp('/v1/news', { sensitive: false, strict: true })).not.toBe(a);
    expect(a.regexp.exec('/v1/news')).not.toBeNull();
    expect(a.regexp.exec('/V1/news')).toBeNull();
  });

});

describe('install scripts', () => {
  it('the project itself has none (npx would refuse them under strict-allow-scripts)', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish'].filter((s) => pkg.scripts[s] !== undefined);
    expect(lifecycle).toEqual([]);
  });

  it('`npx fns --help` runs from the checkout as the README shows', () => {
    const r = spawnSync('npx', ['fns', '--help'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr.replace(/^npm warn .*\n/gm, '')).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: fns');
  });
});

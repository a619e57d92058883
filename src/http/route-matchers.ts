/**
 * express-openapi-validator 5.6.2 compiles a path-to-regexp matcher for every documented route on every
 * request (openapi.metadata.js). Upstream PR #1217 ("perf: cache route matchers") fixes that and is not
 * released yet; until it is, the compiled matchers are memoised here, at run time, on the very
 * path-to-regexp module the validator loads (no install script, so `npm ci --omit=dev` and `npx` need
 * nothing). Drop this file when a release caches route matchers.
 *
 * Safe for every caller of that module: a result depends only on the path and the options, a RegExp
 * without the `g` or `y` flag keeps no state between `exec` calls, and callers read the result only.
 */
import { createRequire } from 'node:module';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => { regexp: RegExp; keys: unknown[] };
interface PathToRegexpModule {
  pathToRegexp: PathToRegexp & { memoised?: true };
}

/** Bound on distinct (path, options) pairs kept: the contract has a handful of routes. */
const MAX_ENTRIES = 1000;

/** Memoises `pathToRegexp` of the path-to-regexp the validator resolves; idempotent. Returns that module. */
export function cacheValidatorRouteMatchers(): PathToRegexpModule {
  const require = createRequire(import.meta.url);
  const fromValidator = createRequire(require.resolve('express-openapi-validator'));
  const mod = fromValidator('path-to-regexp') as PathToRegexpModule;
  if (mod.pathToRegexp.memoised) return mod;
  const compile = mod.pathToRegexp;
  const cache = new Map<string, ReturnType<PathToRegexp>>();
  const memoised = ((path: unknown, options?: Record<string, unknown>) => {
    if (typeof path !== 'string') return compile(path, options);
    const key = `${JSON.stringify(options ?? {})}\u0000${path}`;
    let found = cache.get(key);
    if (found === undefined) {
      found = compile(path, options);
      if (cache.size < MAX_ENTRIES) cache.set(key, found);
    }
    return found;
  }) as PathToRegexpModule['pathToRegexp'];
  memoised.memoised = true;
  mod.pathToRegexp = memoised;
  return mod;
}

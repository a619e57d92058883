// The Node.js this checkout supports, read from package.json's `engines.node` (`>=MAJOR`, written once
// there). Plain JavaScript with no syntax newer than Node 12, so that an old Node reaches the message
// instead of a crash deep in a native module.
import { readFileSync } from 'node:fs';

/** The lowest supported major version, from package.json. */
export function minimumNodeMajor() {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const m = /^>=\s*(\d+)/.exec((pkg.engines && pkg.engines.node) || '');
  if (!m) throw new Error('package.json: engines.node must read ">=MAJOR"');
  return Number(m[1]);
}

/** Undefined when `version` (process.version, "v24.21.0") is supported, else the message to print. */
export function unsupportedNode(version) {
  const need = minimumNodeMajor();
  const major = Number(/^v?(\d+)/.exec(version)[1]);
  if (major >= need) return undefined;
  return (
    `fns: this is Node.js ${version}; the Financial News Service needs Node.js ${need} or newer ` +
    `(Node.js ${major} is not supported).\n` +
    'Install a current Node.js (https://nodejs.org, or from the npm registry: ' +
    'npm install --prefix ~/.cache/node24 node@24 and put ~/.cache/node24/node_modules/node/bin first on PATH), ' +
    'then run npm ci again.'
  );
}

#!/usr/bin/env node
// The operator command line. Runs a cached esbuild bundle of src/cli/main.ts (cli-bundle.mjs: built on
// first use, rebuilt when a source changes), else the TypeScript sources through tsx's loader.
// An unsupported Node.js is refused first, with the version it needs (bin/node-version.mjs), before any
// native module is loaded.
import { unsupportedNode } from './node-version.mjs';

const refusal = unsupportedNode(process.version);
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(2);
}

const { cliBundle } = await import('./cli-bundle.mjs');
const bundle = await cliBundle();
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}

#!/usr/bin/env node
// The operator command line. Runs a cached esbuild bundle of src/cli/main.ts (cli-bundle.mjs: built on
// first use, rebuilt when a source changes), else the TypeScript sources through tsx's loader.
import { cliBundle } from './cli-bundle.mjs';

const bundle = await cliBundle();
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}

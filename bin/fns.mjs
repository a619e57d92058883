#!/usr/bin/env node
// The operator command line. Runs the TypeScript sources through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');

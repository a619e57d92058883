/** Runs `fns` as a real process (node bin/fns.mjs) against a DATA_DIR, the way an operator does. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { repoRoot } from '../support/specs.js';

export const fnsBin = join(repoRoot, 'bin', 'fns.mjs');

export interface FnsResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface FnsOptions {
  dataDir: string;
  /** Extra environment (PORT, HOST, ...); DATA_DIR is set from dataDir. */
  env?: Record<string, string | undefined>;
  /** Written to standard input, which is then closed. */
  input?: string;
}

export function fnsWith(opts: FnsOptions, ...args: string[]): Promise<FnsResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fnsBin, ...args], {
      env: { ...process.env, PORT: undefined, HOST: undefined, ...opts.env, DATA_DIR: opts.dataDir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.stdin.end(opts.input ?? '');
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A fresh DATA_DIR; `fns(...)` runs against it. */
export function tempDataDir(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    fns: (...args: string[]) => fnsWith({ dataDir: dir }, ...args),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An expected condition: a one-line `fns: ...` message, no stack trace. */
export function expectCleanFailure(r: FnsResult, code: number, message: string | RegExp): void {
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).toMatch(typeof message === 'string' ? new RegExp(`^fns: .*${escape(message)}`, 'm') : message);
  expect(r.code).toBe(code);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** NDJSON of `n` good articles. */
export function ndjson(n: number, prefix = 'Headline'): string {
  let out = '';
  for (let i = 0; i < n; i++) out += `${JSON.stringify({ content: `${prefix} ${i} about copper and Apple shares` })}\n`;
  return out;
}

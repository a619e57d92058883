/**
 * The first hour without traps: an unsupported Node.js is refused with the version it needs, every
 * command group answers --help, and a data command typed without DATA_DIR next to a demo says where the
 * demo's data is.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { minimumNodeMajor, unsupportedNode } from '../../bin/node-version.mjs';
import { commands } from '../../src/cli/commands.js';
import { repoRoot } from '../support/specs.js';
import { fnsBin, tempDataDir, type FnsResult } from './support.js';

const engines = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).engines.node as string;

/** bin/fns.mjs under a Node that reports `version` (process.version replaced before the entry point loads). */
function fnsAsNode(version: string, ...args: string[]): Promise<FnsResult> {
  const code = `Object.defineProperty(process, 'version', { value: ${JSON.stringify(version)} }); process.argv.splice(1, 0, ${JSON.stringify(fnsBin)}); await import(${JSON.stringify(new URL(`file://${fnsBin}`).href)});`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code, '--', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c, stdout, stderr }));
  });
}

describe('the supported Node.js: package.json engines, refused below it by fns', () => {
  it('reads the minimum from engines.node', () => {
    expect(engines).toMatch(/^>=\d+$/);
    expect(minimumNodeMajor()).toBe(Number(engines.slice(2)));
  });

  it('accepts the minimum and newer, refuses older with the version it needs', () => {
    const min = minimumNodeMajor();
    expect(unsupportedNode(`v${min}.0.0`)).toBeUndefined();
    expect(unsupportedNode(`v${min + 4}.1.0`)).toBeUndefined();
    expect(unsupportedNode(`v${min - 2}.19.0`)).toContain(`needs Node.js ${min} or newer`);
  });

  it('this process runs a supported Node (CI runs the tests on the active LTS)', () => {
    expect(unsupportedNode(process.version)).toBeUndefined();
  });

  it('fns on an older Node exits 2 with the message, before loading anything native', async () => {
    const min = minimumNodeMajor();
    const r = await fnsAsNode(`v${min - 2}.20.2`, 'keys', 'list');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`this is Node.js v${min - 2}.20.2`);
    expect(r.stderr).toContain(`needs Node.js ${min} or newer`);
  });

  it('fns on a supported Node runs (the same entry point, the refusal can pass)', async () => {
    const r = await fnsAsNode(`v${minimumNodeMajor()}.0.0`, '--help');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: fns');
  });
});

describe('every command group answers --help and fns help <group> with its commands, exit 0', () => {
  const groups = [...new Set(commands.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!))];
  const data = tempDataDir('fns-runtime-');
  afterAll(() => data.remove());

  it('has groups to check', () =>
    expect(groups).toEqual(expect.arrayContaining(['keys', 'accounts', 'articles', 'sources'])));

  it.each(groups)('fns %s --help / -h / fns help %s', async (group) => {
    const members = commands.filter((c) => c.name.startsWith(`${group} `));
    for (const args of [
      [group, '--help'],
      [group, '-h'],
      ['help', group],
    ]) {
      const r = await data.fns(...args);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      for (const c of members) expect(r.stdout).toContain(`fns ${c.name}`);
    }
  });

  it('a group without a command still exits 2 and lists its commands', async () => {
    const r = await data.fns('sources');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"sources" needs a command');
  });
});

describe('a data command next to a demo, without DATA_DIR, says where the demo keeps its data', () => {
  const data = tempDataDir('fns-demo-hint-');
  afterAll(() => data.remove());

  it("names DATA_DIR=<dir>/demo when it is about to create an empty store beside the demo's", async () => {
    mkdirSync(join(data.dir, 'demo'));
    // A demo's store: any command that opens DATA_DIR/demo creates one.
    const demo = await tempDataDirAt(join(data.dir, 'demo'), 'sources', 'list');
    expect(demo.code).toBe(0);
    const r = await data.fns('sources', 'list');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`the demo's data is in ${join(data.dir, 'demo')}`);
    expect(r.stderr).toContain(`DATA_DIR=${join(data.dir, 'demo')} npx fns sources list`);
    // Once the store exists it is the operator's choice: no more notes.
    expect((await data.fns('sources', 'list')).stderr).toBe('');
  });
});

async function tempDataDirAt(dir: string, ...args: string[]) {
  const { fnsWith } = await import('./support.js');
  return fnsWith({ dataDir: dir }, ...args);
}

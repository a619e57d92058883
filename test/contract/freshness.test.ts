/**
 * staleGenerated(): a spec edited without `npm run generate` is noticed (by the SHA-256 recorded in
 * generated/sources.json), a fresh tree and a tree without the YAML sources (an installed package) are not.
 */
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { staleGenerated } from '../../src/contract/freshness.js';
import { repoRoot } from '../support/specs.js';

const SPECS = ['openapi.yaml', 'asyncapi.yaml'];
let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'fns-fresh-'));
  mkdirSync(join(root, 'generated'));
  for (const f of SPECS) cpSync(join(repoRoot, f), join(root, f));
  cpSync(join(repoRoot, 'generated', 'sources.json'), join(root, 'generated', 'sources.json'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('staleGenerated', () => {
  it('says nothing for the checked-out tree: generated/ was built from these specs', () => {
    expect(staleGenerated()).toBeUndefined();
    expect(staleGenerated(root)).toBeUndefined();
  });

  it('records every spec in generated/sources.json', () => {
    const recorded = JSON.parse(readFileSync(join(repoRoot, 'generated', 'sources.json'), 'utf8')).sha256;
    expect(Object.keys(recorded).sort()).toEqual([...SPECS].sort());
  });

  it.each(SPECS)('names %s and the command when it changed after generating', (file) => {
    appendFileSync(join(root, file), '# an edit\n');
    expect(staleGenerated(root)).toBe(`${file} has changed since generated/ was built: run \`npm run generate\``);
  });

  it('names both specs when both changed', () => {
    for (const f of SPECS) appendFileSync(join(root, f), '\n');
    expect(staleGenerated(root)).toMatch(
      /^openapi\.yaml and asyncapi\.yaml have changed since generated\/ was built: run `npm run generate`$/,
    );
  });

  it('hashes bytes: CRLF line endings count as a change (hence *.yaml eol=lf in .gitattributes)', () => {
    const text = readFileSync(join(root, 'openapi.yaml'), 'utf8');
    writeFileSync(join(root, 'openapi.yaml'), text.replace(/\n/g, '\r\n'));
    expect(staleGenerated(root)).toMatch(/^openapi\.yaml has changed/);
    const attributes = readFileSync(join(repoRoot, '.gitattributes'), 'utf8');
    expect(attributes).toMatch(/^\*\.yaml\s+text\s+eol=lf$/m);
  });

  it('says nothing when the YAML sources are absent (generated/ is then the contract)', () => {
    for (const f of SPECS) rmSync(join(root, f));
    expect(staleGenerated(root)).toBeUndefined();
  });

  it('refuses a generated/ without sources.json next to the specs, or with a broken one', () => {
    rmSync(join(root, 'generated', 'sources.json'));
    expect(staleGenerated(root)).toMatch(/sources\.json is missing.*run `npm run generate`$/);
    writeFileSync(join(root, 'generated', 'sources.json'), '{');
    expect(staleGenerated(root)).toMatch(/sources\.json is unreadable.*run `npm run generate`$/);
  });
});

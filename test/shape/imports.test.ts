/**
 * The shape of src/ (docs/architecture.md "Layers"): no import cycle between files or between folders,
 * and no folder importing a layer above its own. The checker is scripts/lib/imports.ts; the first
 * describe shows on small graphs that it finds what it looks for.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cycles,
  fileGraph,
  folderGraph,
  importsOf,
  LAYERS,
  upwardImports,
  type Graph,
} from '../../scripts/lib/imports.js';
import { repoRoot } from '../support/specs.js';

const graph = (edges: Record<string, string[]>): Graph =>
  new Map(Object.entries(edges).map(([k, v]) => [k, new Set(v)]));

describe('the checker', () => {
  it('reads static imports, re-exports and literal dynamic imports, not comments or packages', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b/b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "const e = await import('./e.js');",
      "import express from 'express';",
      "// import { f } from './f.js';",
      "/* import { g } from './g.js'; */",
    ].join('\n');
    expect(importsOf(text)).toEqual(['./a.js', '../b/b.js', './c.js', './d.js', './e.js']);
  });

  it('finds a file cycle and a folder cycle, and none in a tree', () => {
    expect(cycles(graph({ 'http/a.ts': ['http/b.ts'], 'http/b.ts': ['http/a.ts'] }))).toEqual([
      ['http/a.ts', 'http/b.ts'],
    ]);
    const files = graph({ 'enrich/x.ts': ['dedup/y.ts'], 'dedup/y.ts': ['enrich/z.ts'], 'enrich/z.ts': [] });
    expect(cycles(files)).toEqual([]);
    expect(cycles(folderGraph(files))).toEqual([['dedup', 'enrich']]);
    expect(cycles(graph({ 'a.ts': ['b.ts', 'c.ts'], 'b.ts': ['c.ts'], 'c.ts': [] }))).toEqual([]);
  });

  it('finds an import from a lower layer to a higher one, and a folder without a layer', () => {
    const files = graph({ 'domain/rule.ts': ['http/app.ts'], 'http/app.ts': ['domain/rule.ts'], 'newthing/x.ts': [] });
    expect(upwardImports(files)).toEqual([
      `domain/rule.ts → http/app.ts (layer ${LAYERS.domain} imports layer ${LAYERS.http})`,
      'newthing/x.ts: folder newthing/ has no layer in docs/architecture.md',
    ]);
  });
});

describe('src/ as it is', () => {
  const files = fileGraph(join(repoRoot, 'src'));

  it('reads every module of src/', () => {
    expect(files.size).toBeGreaterThan(50);
    expect(files.get('server/index.ts')?.size).toBeGreaterThan(5);
  });

  it('has no import cycle between files', () => {
    expect(cycles(files)).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    expect(cycles(folderGraph(files))).toEqual([]);
  });

  it('has no folder importing a layer above its own', () => {
    expect(upwardImports(files)).toEqual([]);
  });
});

import { cpSync, mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffTrees, generate } from '../../scripts/generate.js';
import { repoRoot } from '../support/specs.js';

describe('generated/ is exactly what the specs generate', () => {
  const fresh = mkdtempSync(join(tmpdir(), 'fns-gen-test-'));
  afterAll(() => rmSync(fresh, { recursive: true, force: true }));

  it('regenerating from openapi.yaml and asyncapi.yaml gives byte-identical files', async () => {
    await generate(fresh);
    expect(diffTrees(fresh, join(repoRoot, 'generated'))).toEqual([]);
  }, 120_000);

  it('catches a hand edit, a deleted file and an extra file in generated/', () => {
    const edited = mkdtempSync(join(tmpdir(), 'fns-gen-edit-'));
    try {
      cpSync(fresh, edited, { recursive: true });
      appendFileSync(join(edited, 'openapi.d.ts'), '// hand edit\n');
      rmSync(join(edited, 'stream.ts'));
      appendFileSync(join(edited, 'extra.json'), '{}');
      appendFileSync(join(edited, 'sources.json'), ' ');
      expect(diffTrees(fresh, edited)).toEqual(['extra.json', 'openapi.d.ts', 'sources.json', 'stream.ts']);
    } finally {
      rmSync(edited, { recursive: true, force: true });
    }
  });
});

/** `fns articles ingest` through the one pipeline (identity, per-line outcomes) and `fns articles show`. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectCleanFailure, tempDataDir } from './support.js';

const dir = tempDataDir('fns-identity-');
afterAll(() => dir.remove());

const lines = [
  {
    content: 'Fed raises rates by 25 basis points',
    source: 'desk',
    url: 'https://www.example.com/fed/?utm_source=rss',
    published_at: '2026-11-21T10:00:00Z',
  },
  {
    content: 'Fed raises rates by 25 basis points',
    source: 'desk',
    url: 'https://www.example.com/fed-copy',
    published_at: '2026-11-21T10:00:00Z',
  },
  { content: 'Copper rallies on supply fears' },
  { content: 'Copper rallies: what the desk says', url: 'https://WWW.EXAMPLE.COM:443/fed#top' },
];

describe('fns articles ingest answers per line: stored, duplicate (reason, id) or skipped', () => {
  it('the same NDJSON ingested twice stores nothing the second time (exit 0)', async () => {
    const file = join(dir.dir, 'a.ndjson');
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const first = await dir.fns('articles', 'ingest', file, '--json');
    expect(first.code).toBe(0);
    const r1 = JSON.parse(first.stdout);
    expect(r1).toMatchObject({ lines: 4, ingested: 2, errors: [] });
    expect(r1.duplicates).toEqual([
      { line: 2, reason: 'same-headline', id: r1.ids[0] },
      { line: 4, reason: 'same-url', id: r1.ids[0] },
    ]);
    const second = await dir.fns('articles', 'ingest', file);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('ingested 0 of 4 article(s), 4 already stored (duplicate)');
  });
  it('a line whose source is no source name is skipped with the rule', async () => {
    const file = join(dir.dir, 'b.ndjson');
    writeFileSync(file, '{"content":"x y z","source":"Reuters Markets"}\n');
    const r = await dir.fns('articles', 'ingest', file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('line 1: source must be a source name');
  });
});

describe('fns articles show <id>: source, url, carriers and the reason of each repeat', () => {
  it('shows the stored article with its items and reasons, human and --json', async () => {
    const file = join(dir.dir, 'a.ndjson');
    const ids = JSON.parse((await dir.fns('articles', 'ingest', file, '--json')).stdout).duplicates.map(
      (d: { id: string }) => d.id,
    );
    const json = await dir.fns('articles', 'show', ids[0], '--json');
    expect(json.code).toBe(0);
    const a = JSON.parse(json.stdout);
    expect(a).toMatchObject({
      id: ids[0],
      source: 'desk',
      url: 'https://www.example.com/fed',
      tickers: expect.any(Array),
    });
    // The operator line under another spelling of the link is a carrier (it is another source's copy).
    expect(a.carriers).toEqual([
      { source: 'desk', url: 'https://www.example.com/fed', at: expect.any(String), reason: null },
      { source: 'operator', url: 'https://www.example.com/fed', at: expect.any(String), reason: 'same-url' },
    ]);
    expect(a.items.map((i: { source: string; reason: string | null }) => [i.source, i.reason])).toEqual([
      ['desk', null],
      ['desk', 'same-headline'],
      ['operator', 'same-url'],
    ]);
    const human = await dir.fns('articles', 'show', ids[0]);
    expect(human.stdout).toMatch(/^source: +desk$/m);
    expect(human.stdout).toMatch(/^url: +https:\/\/www\.example\.com\/fed$/m);
    expect(human.stdout).toMatch(/same-headline/);
  });
  it('an unknown id is refused cleanly', async () => {
    expectCleanFailure(
      await dir.fns('articles', 'show', '01M7Z87BJ3K8W3Q2ZP7R9T4V6X'),
      1,
      'no article 01M7Z87BJ3K8W3Q2ZP7R9T4V6X',
    );
  });
  it('is listed in fns articles --help', async () => {
    const r = await dir.fns('articles', '--help');
    expect(r.stdout).toMatch(/fns articles show <article_id> \[--json\]/);
  });
});

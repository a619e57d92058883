/**
 * The feed parser thread (src/sources/feed/off-thread.ts) holds the process exactly while a parse is
 * under way: a script that parses a large feed on it gets its answer (the process does not end with the
 * parse pending) and then ends by itself (an idle thread does not keep it alive).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../support/specs.js';

const dir = mkdtempSync(join(tmpdir(), 'fns-off-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the feed parser thread', () => {
  it('answers a script that awaits nothing else, and lets it exit by itself', () => {
    const module = pathToFileURL(join(repoRoot, 'src/sources/feed/off-thread.ts')).href;
    const script = join(dir, 'parse-large-feed.mjs');
    writeFileSync(
      script,
      `import { parseFeedOffThread, OFF_THREAD_MIN_BYTES } from ${JSON.stringify(module)};
const items = Array.from({ length: 5000 }, (_, i) => '<item><guid>g' + i + '</guid><title>Headline number ' + i + '</title></item>').join('');
const body = new TextEncoder().encode('<?xml version="1.0"?><rss version="2.0"><channel><title>big</title>' + items + '</channel></rss>');
if (body.length < OFF_THREAD_MIN_BYTES) throw new Error('the feed is too small to go to the thread');
const feed = await parseFeedOffThread(body, { baseUrl: 'https://example.com/feed.rss' });
console.log('parsed ' + feed.items.length);
`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('parsed 5000');
    expect(r.signal).toBeNull(); // not killed by the timeout: it ended on its own
    expect(r.status).toBe(0);
  });
});

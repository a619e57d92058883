/** The feed parser thread (src/sources/feed/off-thread.ts): an idle thread never keeps a process alive. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../support/specs.js';

describe('the feed parser thread', () => {
  it('lets a process that parsed a large feed on it exit by itself', () => {
    const script = `
      import { parseFeedOffThread, OFF_THREAD_MIN_BYTES } from './src/sources/feed/off-thread.ts';
      const items = Array.from({ length: 400 }, (_, i) => '<item><guid>g' + i + '</guid><title>Headline number ' + i + ' of a large feed</title><description>' + 'x'.repeat(200) + '</description></item>').join('');
      const body = new TextEncoder().encode('<?xml version="1.0"?><rss version="2.0"><channel><title>big</title>' + items + '</channel></rss>');
      if (body.length < OFF_THREAD_MIN_BYTES) throw new Error('the feed is too small to go to the thread');
      const feed = await parseFeedOffThread(body, { baseUrl: 'https://example.com/feed.rss' });
      console.log('parsed ' + feed.items.length);
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('parsed 400');
    expect(r.signal).toBeNull(); // not killed by the timeout: it ended on its own
    expect(r.status).toBe(0);
  });
});

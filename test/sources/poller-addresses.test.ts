/**
 * The poller under the address rules (FEED_ALLOW_PRIVATE): a source on a loopback address is not
 * fetched unless the operator allows it, and the refusal is recorded as the source's error, naming the
 * address and its class; the setting reaches the poller from the configuration.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { SourcePoller, type PollReport } from '../../src/sources/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { until } from '../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'fns-poller-addresses-'));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RSS =
  '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><guid>g-1</guid><title>Copper rises on supply worries</title></item></channel></rss>';

async function loopbackFeed(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(RSS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed`, hits: () => hits };
}

async function pollOne(url: string, allowPrivate: boolean | undefined) {
  const store = new SqliteStore(join(dir, `${Math.random().toString(36).slice(2)}.sqlite`));
  cleanups.push(() => store.close());
  await store.sources.add({ name: 'wire', url, everyMs: 60_000, urgency: 'auto' }, Date.now());
  const reports: PollReport[] = [];
  const poller = new SourcePoller({
    store: store.sources,
    tickMs: 50,
    registryCheckMs: 50,
    http: { timeoutMs: 2000, connectTimeoutMs: 1000 },
    ...(allowPrivate === undefined ? {} : { allowPrivate }),
    onPoll: (r) => reports.push(r),
  });
  cleanups.push(() => poller.stop());
  await poller.start();
  await until(() => reports.length >= 1, 'the first poll');
  return { report: reports[0]!, source: (await store.sources.get('wire'))!, articles: await store.articles.count() };
}

describe('a feed on a loopback address is polled only with FEED_ALLOW_PRIVATE', () => {
  it('by default the poll is a refused error naming the address and its class; nothing is requested', async () => {
    const feed = await loopbackFeed();
    const { report, source, articles } = await pollOne(feed.url, undefined);
    expect(report).toMatchObject({ outcome: 'error', status: null, failures: 1 });
    expect(report.error).toBe(
      'refused: 127.0.0.1 is a loopback address (127.0.0.0/8); feeds on private, loopback or link-local addresses are polled only with FEED_ALLOW_PRIVATE=true',
    );
    expect(source.lastError).toBe(report.error);
    expect(articles).toBe(0);
    expect(feed.hits()).toBe(0);
  });

  it('allowed, the same feed is fetched and stored', async () => {
    const feed = await loopbackFeed();
    const { report, articles } = await pollOne(feed.url, true);
    expect(report.outcome).not.toBe('error');
    expect(articles).toBe(1);
    expect(feed.hits()).toBe(1);
  });

  it('the setting is FEED_ALLOW_PRIVATE=true|false, off by default, and nothing else', () => {
    expect(loadConfig({}).feedAllowPrivate).toBe(false);
    expect(loadConfig({ FEED_ALLOW_PRIVATE: 'true' }).feedAllowPrivate).toBe(true);
    expect(loadConfig({ FEED_ALLOW_PRIVATE: 'false' }).feedAllowPrivate).toBe(false);
    expect(() => loadConfig({ FEED_ALLOW_PRIVATE: 'yes' })).toThrow(/FEED_ALLOW_PRIVATE must be true or false/);
    expect(() => loadConfig({ FEED_ALLOW_PRIVATE: '' })).toThrow(/FEED_ALLOW_PRIVATE is set but empty/);
  });
});

/**
 * The status page in a real browser (Debian's Chromium through playwright-core, JavaScript off), on a
 * running service polling two sources: when one stops answering, its row and the overall state turn
 * degraded within one poll interval plus a few seconds and an incident opens; when it answers again
 * the row is operational and the incident has ended. The page asks nothing of anything but the service.
 * Screenshots of both moments go to artifacts/screenshots/ (git-ignored), kept by CI as artifacts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startService, type RunningService } from '../../src/server/index.js';
import { sqliteFile } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { StatusReport } from '../../src/status/index.js';
import { TrigramEmbedder } from '../support/service.js';
import { launchChromium, screenshotDir as shots } from '../support/chromium.js';
import { until } from '../support/wait.js';

const POLL_MS = 1_000;
/** The rule: degraded within one poll interval plus a few seconds (the report is refreshed every second here). */
const DEGRADED_WITHIN_MS = POLL_MS + 8_000;

/** A feed publisher that answers a small RSS document, 503 while `failing`, nothing at all while `hanging`. */
function feedServer(): { server: Server; url: (path: string) => string; failing: Set<string>; hanging: Set<string> } {
  const failing = new Set<string>();
  const hanging = new Set<string>();
  const server = createServer((req, res) => {
    if (hanging.has(req.url ?? '')) return;
    if (failing.has(req.url ?? '')) return void res.writeHead(503).end('down for maintenance at 10.1.2.3');
    const item = `<item><guid>${req.url}-1</guid><title>Acme Corp beats quarterly estimates</title></item>`;
    res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
    res.end(`<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>${item}</channel></rss>`);
  });
  server.listen(0, '127.0.0.1');
  return {
    server,
    failing,
    hanging,
    url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
  };
}

let browser: Browser;
let context: BrowserContext;
let svc: RunningService;
let feeds: ReturnType<typeof feedServer>;
let dataDir: string;
const external: string[] = [];

beforeAll(async () => {
  feeds = feedServer();
  await new Promise((r) => feeds.server.once('listening', r));
  dataDir = mkdtempSync(join(tmpdir(), 'fns-status-page-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', FEED_ALLOW_PRIVATE: 'true' });
  const store = new SqliteStore(sqliteFile(config));
  for (const name of ['harbor-wire', 'summit-wire'])
    await store.sources.add({ name, url: feeds.url(`/${name}`), everyMs: POLL_MS, urgency: 'auto' }, Date.now());
  await store.close();
  svc = await startService(config, { embedder: new TrigramEmbedder(), statusRefreshMs: 1_000, log: () => {} });
  browser = await launchChromium();
  context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 1600 } });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(svc.url)) return route.continue();
    external.push(url);
    return route.abort('internetdisconnected');
  });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await svc?.close();
  feeds?.server.closeAllConnections();
  feeds?.server.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function report(): Promise<StatusReport> {
  return (await fetch(`${svc.url}/v1/status`)).json() as Promise<StatusReport>;
}

/**
 * The page as a reader sees it, freshly loaded in a page of its own (the page reloads itself every
 * second, which would interrupt a navigation of a page kept open): the overall state line, the text of
 * the source's row and of the incidents section; with `shot`, a full-page screenshot under that name.
 */
async function look(shot?: string): Promise<{ banner: string; row: string; incidents: string }> {
  const page = await context.newPage();
  try {
    await page.goto(`${svc.url}/status`, { waitUntil: 'load' });
    const text = async (locator: Locator) => (await locator.first().innerText()).toLowerCase();
    const seen = {
      banner: (await text(page.locator('main'))).split('\n').slice(0, 4).join(' '),
      row: await text(page.locator('tr', { hasText: 'harbor-wire' })),
      incidents: await text(page.locator('section', { has: page.getByRole('heading', { name: 'Incidents' }) })),
    };
    expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1);
    if (shot) await page.screenshot({ path: join(shots, shot), fullPage: true });
    return seen;
  } finally {
    await page.close();
  }
}

describe('the status page shows a source failing and recovering', () => {
  it('starts operational once both sources have been polled and the search index has loaded', async () => {
    await until(async () => (await report()).state === 'operational', 'the overall state operational', 20_000, 100);
    await until(async () => (await look()).row.includes('operational'), 'the harbor-wire row operational', 20_000, 200);
  }, 60_000);

  it('turns the row and the overall state degraded within one poll interval plus a few seconds, and opens an incident', async () => {
    const failedAt = Date.now();
    feeds.failing.add('/harbor-wire');
    await until(
      async () => (await report()).state === 'degraded',
      'the overall state degraded',
      DEGRADED_WITHIN_MS,
      100,
    );
    expect(Date.now() - failedAt).toBeLessThan(DEGRADED_WITHIN_MS);
    const json = await report();
    expect(json.sources.find((s) => s.name === 'harbor-wire')).toMatchObject({
      state: 'degraded',
      cause: 'source_error_status',
    });
    expect(json.incidents.find((i) => i.component === 'source:harbor-wire')).toMatchObject({
      kind: 'automatic',
      ended_at: null,
    });
    const seen = await look('status-source-failing.png');
    expect(seen.banner).toContain('degraded');
    expect(seen.row).toContain('degraded');
    expect(seen.incidents).toContain('harbor-wire');
    expect(seen.incidents).toContain('ongoing');
  }, 30_000);

  it('closes the incident when the source answers again', async () => {
    feeds.failing.delete('/harbor-wire');
    await until(
      async () => (await report()).state === 'operational',
      'the overall state operational again',
      40_000,
      200,
    );
    const json = await report();
    const incident = json.incidents.find((i) => i.component === 'source:harbor-wire');
    expect(incident?.ended_at).not.toBeNull();
    const seen = await look('status-source-recovered.png');
    expect(seen.row).toContain('operational');
    expect(seen.incidents).toContain('harbor-wire');
    expect(seen.incidents).not.toContain('ongoing');
  }, 60_000);

  it('turns a source that accepts the connection and never answers degraded before its poll times out', async () => {
    feeds.hanging.add('/summit-wire');
    const since = Date.now();
    const summit = async () => (await report()).sources.find((s) => s.name === 'summit-wire')!;
    await until(
      async () => (await summit()).state === 'degraded',
      'summit-wire degraded',
      DEGRADED_WITHIN_MS + 10_000,
      100,
    );
    expect(Date.now() - since).toBeLessThan(POLL_MS + 10_000 + 5_000);
    expect((await summit()).cause).toBe('source_overdue');
    expect((await look()).banner).toContain('degraded');
  }, 40_000);

  it('asked nothing of any address but the service, and shows no internal address or error text', async () => {
    expect(external).toEqual([]);
    const html = await (await fetch(`${svc.url}/status`)).text();
    const body = JSON.stringify(await report());
    for (const text of [html, body]) {
      expect(text).not.toContain('127.0.0.1');
      expect(text).not.toContain('10.1.2.3');
      expect(text).not.toMatch(/maintenance|https?:\/\//);
    }
  });
});

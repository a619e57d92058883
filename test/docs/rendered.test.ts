/// <reference lib="dom" />
/**
 * The generated reference docs render in a real browser with the network off: every operation of
 * openapi.yaml and the stream channel of asyncapi.yaml appear as text on the page. Screenshots go to
 * artifacts/screenshots/ (git-ignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadYaml, repoRoot } from '../support/specs.js';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const shots = join(repoRoot, 'artifacts', 'screenshots');

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(executablePath)) {
    throw new Error(`Chromium not found at ${executablePath}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  mkdirSync(shots, { recursive: true });
});
afterAll(async () => browser?.close());

/**
 * Opens a generated page offline, clicks each sidebar entry in `sections` (Redoc shows one section at a
 * time) and returns the visible text of the landing page and of every section.
 */
async function render(file: string, sections: string[], screenshot: string): Promise<{ text: string; external: string[] }> {
  const context = await browser.newContext({ offline: true, viewport: { width: 1400, height: 1000 } });
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    external.push(url);
    return route.abort('internetdisconnected');
  });
  const page = await context.newPage();
  await page.goto(pathToFileURL(join(repoRoot, 'generated', 'docs', file)).href, { waitUntil: 'load' });
  await page.waitForFunction(() => document.body.innerText.length > 500, undefined, { timeout: 20_000 });
  let text = await page.evaluate(() => document.body.innerText);
  for (const section of sections) {
    await page.locator('nav, aside, body').getByText(section, { exact: true }).first().click();
    await page.waitForFunction((s) => document.body.innerText.split(s).length > 2, section, { timeout: 20_000 });
    text += '\n' + (await page.evaluate(() => document.body.innerText));
  }
  await page.screenshot({ path: join(shots, screenshot), fullPage: false });
  await context.close();
  return { text, external };
}

describe('REST reference (generated/docs/rest.html) renders offline', () => {
  const openapi = loadYaml('openapi.yaml');
  const operations = Object.entries<any>(openapi.paths).flatMap(([path, item]) =>
    Object.values<any>(item).map((op) => ({ path, summary: op.summary as string, id: op.operationId as string })),
  );

  it('shows every operation by its summary and path, and the plans table', async () => {
    const { text, external } = await render('rest.html', openapi.tags.map((t: any) => t.name), 'rest.png');
    for (const op of operations) {
      expect(text, op.id).toContain(op.summary);
      expect(text, op.id).toContain(op.path);
    }
    expect(text).toContain('API key is inactive');
    expect(text).toMatch(/starter\s+20\s+168\s+1 req\/min/);
    // Everything the page needs is inline: at most it tries optional icons, never a script or style.
    expect(external.filter((u) => /\.(js|css)(\?|$)/.test(u))).toEqual([]);
  }, 60_000);
});

describe('stream reference (generated/docs/stream.html) renders offline', () => {
  const asyncapi = loadYaml('asyncapi.yaml');

  it('shows the /v1/stream channel, the receive operation and the close codes', async () => {
    const { text } = await render('stream.html', [asyncapi.channels.stream.title], 'stream.png');
    expect(text).toContain(asyncapi.channels.stream.address);
    expect(text).toContain(asyncapi.operations.receiveArticle.title);
    for (const c of Object.values<any>(asyncapi['x-stream'].closeCodes)) expect(text).toContain(c.reason);
  }, 60_000);
});

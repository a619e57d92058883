/// <reference lib="dom" />
/**
 * The generated reference docs render in a real browser with the network off (an offline context, and
 * every request that is not file: or data: is recorded and aborted): every operation of openapi.yaml
 * and the stream channel of asyncapi.yaml appear as text on the page, the tables of the descriptions
 * are shown whole at a 1400 px wide window, the request samples are there, and the page asks nothing
 * of the network, not even an optional logo. Screenshots go to artifacts/screenshots/ (git-ignored).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshotDir as shots } from '../support/chromium.js';
import { loadYaml, repoRoot } from '../support/specs.js';

const VIEWPORT = { width: 1400, height: 1000 };

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

/**
 * Opens a generated page offline and runs `use` on it; returns every request the page attempted to
 * anything but itself (file:) or inline data (data:), after the page has settled.
 */
async function withPage(file: string, use: (page: Page) => Promise<void>): Promise<string[]> {
  const context = await browser.newContext({ offline: true, viewport: VIEWPORT });
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    external.push(url);
    return route.abort('internetdisconnected');
  });
  try {
    const page = await context.newPage();
    await page.goto(pathToFileURL(join(repoRoot, 'generated', 'docs', file)).href, { waitUntil: 'load' });
    await page.waitForFunction(() => document.body.innerText.length > 500, undefined, { timeout: 20_000 });
    await use(page);
    // What the page loads once it has started (Redoc loaded its logo after hydration) has been asked for.
    await page.waitForLoadState('networkidle');
  } finally {
    await context.close();
  }
  return external;
}

/** Clicks a sidebar entry (Redoc shows one section at a time) and waits until its text is on the page. */
async function openSection(page: Page, section: string): Promise<string> {
  await page.locator('nav, aside, body').getByText(section, { exact: true }).first().click();
  await page.waitForFunction((s) => document.body.innerText.split(s).length > 2, section, { timeout: 20_000 });
  return page.evaluate(() => document.body.innerText);
}

interface TableFit {
  headers: string;
  tableWidth: number;
  tableRight: number;
  boxWidth: number;
  viewport: number;
}

/** Width of every table on the page against its box (Redoc clips overflow) and the window. */
function tableFits(page: Page): Promise<TableFit[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('table')).map((t) => ({
      headers: Array.from(t.rows[0]?.cells ?? [])
        .map((c) => c.innerText)
        .join(' | '),
      tableWidth: t.scrollWidth,
      tableRight: t.getBoundingClientRect().right,
      boxWidth: t.parentElement!.clientWidth,
      viewport: window.innerWidth,
    })),
  );
}

function expectWhole(fits: TableFit[]): void {
  for (const f of fits) {
    expect(f.tableWidth, `${f.headers}: ${f.tableWidth} px wide in a ${f.boxWidth} px box`).toBeLessThanOrEqual(
      f.boxWidth,
    );
    expect(f.tableRight, `${f.headers}: right edge at ${f.tableRight} px`).toBeLessThanOrEqual(f.viewport);
  }
}

describe('REST reference (generated/docs/rest.html) renders offline', () => {
  const openapi = loadYaml('openapi.yaml');
  const operations = Object.entries<any>(openapi.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({
      path,
      method: method.toUpperCase(),
      op,
      summary: op.summary as string,
      id: op.operationId as string,
    })),
  );
  const sample = (op: any, lang: string): string => op['x-codeSamples'].find((s: any) => s.lang === lang).source;

  it('shows every operation, the plans table whole at 1400 px, plain server descriptions; requests nothing', async () => {
    let text = '';
    let fits: TableFit[] = [];
    const external = await withPage('rest.html', async (page) => {
      text = await page.evaluate(() => document.body.innerText);
      fits = await tableFits(page);
      await page.screenshot({ path: join(shots, 'rest.png') });
      for (const tag of openapi.tags.map((t: any) => t.name)) {
        text += '\n' + (await openSection(page, tag));
        // Redoc renders an operation once it is scrolled to: open each one.
        for (const o of operations.filter((x) => x.op.tags.includes(tag)))
          text += '\n' + (await openSection(page, o.summary));
      }
      // The webhooks (OpenAPI 3.1 top-level `webhooks`) are rendered under their tag.
      for (const hook of Object.values<any>(openapi.webhooks ?? {}))
        text += '\n' + (await openSection(page, hook.post.summary));
    });
    for (const hook of Object.values<any>(openapi.webhooks ?? {})) {
      expect(text).toContain(hook.post.summary);
      expect(text).toContain('webhook-signature');
    }
    for (const op of operations) {
      expect(text, op.id).toContain(op.summary);
      expect(text, op.id).toContain(op.path);
    }
    expect(text).toContain('API key is inactive');
    expect(text).toMatch(/starter\s+20\s+168\s+1 req\/min/);
    // The plans table has a column per x-plans field shown; all of it inside its box and the window.
    expect(fits.length).toBeGreaterThan(0);
    expect(fits[0]!.headers).toMatch(/^Tier \| .* \| Per-ticker sentiment$/);
    expectWhole(fits);
    // Redoc shows server descriptions as they are written: they must read as plain text.
    for (const server of openapi.servers) expect(text).toContain(server.description);
    expect(external).toEqual([]);
  }, 60_000);

  it('shows the curl and the TypeScript sample of every operation', async () => {
    const shown: Record<string, { curl: string; ts: string }> = {};
    const external = await withPage('rest.html', async (page) => {
      for (const tag of openapi.tags.map((t: any) => t.name)) {
        await openSection(page, tag);
        for (const o of operations.filter((x) => x.op.tags.includes(tag))) {
          await openSection(page, o.summary);
          // The sample panel of this operation: its header names the path.
          const panel = page.locator('.panel-request-samples').filter({ has: page.getByText(o.path, { exact: true }) });
          await panel.scrollIntoViewIfNeeded();
          // Its language menu (Redoc keeps one language for every panel of the page).
          const menu = panel.locator('button[aria-haspopup="menu"]', { hasText: /^(curl|TypeScript)$/ });
          const show = async (language: string) => {
            if ((await menu.innerText()) === language) return;
            await menu.click();
            await page.getByRole('menuitem', { name: language }).click();
            await expect.poll(() => menu.innerText()).toBe(language);
          };
          await show('curl');
          const curl = await panel.innerText();
          await show('TypeScript');
          shown[o.id] = { curl, ts: await panel.innerText() };
          await page.screenshot({ path: join(shots, `rest-sample-${o.id}.png`) });
        }
      }
    });
    for (const o of operations) {
      expect(shown[o.id]?.curl, o.id).toContain(sample(o.op, 'curl').trim().split('\n').at(-1)!.trim());
      expect(shown[o.id]?.ts, o.id).toContain(`api.${o.method}('${o.path}'`);
    }
    expect(external).toEqual([]);
  }, 60_000);
});

describe('stream reference (generated/docs/stream.html) renders offline', () => {
  const asyncapi = loadYaml('asyncapi.yaml');

  it('shows the /v1/stream channel, the receive operation and the close codes, tables whole; requests nothing', async () => {
    let text = '';
    let fits: TableFit[] = [];
    const external = await withPage('stream.html', async (page) => {
      fits = await tableFits(page);
      text = await page.evaluate(() => document.body.innerText);
      text += '\n' + (await openSection(page, asyncapi.channels.stream.title));
      await page.screenshot({ path: join(shots, 'stream.png') });
    });
    expect(text).toContain(asyncapi.channels.stream.address);
    expect(text).toContain(asyncapi.operations.receiveArticle.title);
    for (const c of Object.values<any>(asyncapi['x-stream'].closeCodes)) expect(text).toContain(c.reason);
    expect(fits.length).toBeGreaterThan(0);
    expectWhole(fits);
    expect(external).toEqual([]);
  }, 60_000);
});

/**
 * The mock's webhooks (MOCK_WEBHOOK_URL): signed sample articles a partner verifies with the documented sandbox secret.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/specs.js';
import { verifyWebhook } from '../../clients/typescript/src/index.js';
import { webhookRules } from '../../src/contract/index.js';
import { streamExamples } from '../../generated/stream.js';
import { exampleArticles } from '../../src/mock/stream.js';
import { startMockWebhooks } from '../../src/mock/webhooks.js';
import { independentlyVerified, startReceiver } from './receiver.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('mock webhooks: a signed sample article every few seconds', () => {
  it('posts the sample articles in turn, each verifiable with the sandbox secret of docs/mock.md', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const examples = exampleArticles(streamExamples);
    const hooks = startMockWebhooks({ url: receiver.url, intervalMs: 3_600_000, examples });
    cleanups.push(() => hooks.close());
    expect(await hooks.sendOne()).toEqual({ status: 200, error: null });
    await hooks.sendOne();
    const got = await receiver.waitFor(2);
    const messages = got.map((r) =>
      verifyWebhook(webhookRules.sandboxSecret, r.headers as Record<string, string>, r.body),
    );
    expect(messages.map((m) => m.data.content)).toEqual(examples.slice(0, 2).map((e) => e.content));
    for (const m of messages) expect(m.data.tickers).toBeDefined();
    expect(messages[0]!.data.id < messages[1]!.data.id).toBe(true);
    expect(independentlyVerified(webhookRules.sandboxSecret, got[0]!.headers, got[0]!.body)).toBe(true);
  });

  it('docs/mock.md shows the sandbox secret the mock signs with', () => {
    expect(readFileSync(join(repoRoot, 'docs', 'mock.md'), 'utf8')).toContain(webhookRules.sandboxSecret);
  });

  it('reports a receiver that is down instead of failing', async () => {
    const receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const hooks = startMockWebhooks({ url, intervalMs: 3_600_000, examples: exampleArticles(streamExamples) });
    cleanups.push(() => hooks.close());
    const r = await hooks.sendOne();
    expect(r.status).toBeNull();
    expect(r.error).toMatch(/ECONNREFUSED/);
  });
});

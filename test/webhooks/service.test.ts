/**
 * Webhooks inside the service as `fns serve` wires them: one log line per attempt (endpoint id,
 * webhook-id, status, latency; never the secret) and the metrics (attempts by outcome, backlog per
 * endpoint, oldest undelivered age).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startService, type RunningService } from '../../src/server/index.js';
import { newEndpointId, newSecret, SecretBox } from '../../src/webhooks/index.js';
import { startReceiver } from './receiver.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function service(): Promise<{ svc: RunningService; lines: string[]; line: (re: RegExp) => Promise<string> }> {
  const dir = mkdtempSync(join(tmpdir(), 'fns-wh-svc-'));
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const svc = await startService(
    loadConfig({
      DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
    }),
    {
      pollSources: false,
      embedder: { modelId: 'test:none', embed: async (t) => t.map(() => new Float32Array([1, 0])) },
      log: (l) => {
        lines.push(l);
        for (const w of waiters.filter((w) => w.re.test(l))) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      },
    },
  );
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => svc.close());
  const line = (re: RegExp) => {
    const found = lines.find((l) => re.test(l));
    return found ? Promise.resolve(found) : new Promise<string>((resolve) => waiters.push({ re, resolve }));
  };
  return { svc, lines, line };
}

describe('operations: one log line per attempt, metrics by outcome and backlog', () => {
  it('logs each attempt with endpoint id, webhook-id, status and latency, never the secret; counts it', async () => {
    const { svc, lines, line } = await service();
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 200));
    cleanups.push(() => receiver.close());
    const acct = await svc.store.accounts.createAccount('pro', Date.now());
    const secret = newSecret();
    const box = new SecretBox(Buffer.alloc(32, 3));
    const id = newEndpointId();
    await svc.store.webhooks.add(
      { id, accountId: acct.id, url: receiver.url, tickers: null, secret: box.seal(secret) },
      Date.now(),
    );
    await svc.webhooks!.refresh();
    await svc.store.articles.insert(
      [{ content: 'Logged', urgency: 'regular', sentiment: null, published_at: null, tickers: [] }],
      Date.now,
    );
    svc.webhooks!.wake();
    const failed = JSON.parse(await line(/"kind":"webhook".*"outcome":"failed"/)) as Record<string, unknown>;
    expect(failed).toMatchObject({ level: 'warn', endpoint_id: id, status: 500, outcome: 'failed' });
    expect(failed.webhook_id).toMatch(/^msg_/);
    expect(typeof failed.latency_ms).toBe('number');
    expect(failed.error).toMatch(/^HTTP 500/);
    // The failure is visible in the metrics while it waits: backlog 1, an undelivered article.
    const waiting = await svc.metrics.render();
    expect(waiting).toMatch(new RegExp(`fns_webhook_backlog_articles\\{endpoint="${id}"\\} 1`));
    expect(waiting).toMatch(/fns_webhook_attempts_total\{outcome="failed"\} 1/);
    const ok = JSON.parse(await line(/"kind":"webhook".*"outcome":"delivered"/)) as Record<string, unknown>;
    expect(ok).toMatchObject({ level: 'info', endpoint_id: id, status: 200, webhook_id: failed.webhook_id });
    const after = await svc.metrics.render();
    expect(after).toMatch(/fns_webhook_attempts_total\{outcome="delivered"\} 1/);
    expect(after).toMatch(/fns_webhook_delivery_lag_seconds_count 1/);
    expect(after).toMatch(/fns_webhook_oldest_undelivered_seconds 0/);
    expect(lines.join('\n')).not.toContain(secret.slice('whsec_'.length));
    // Stored encrypted (WEBHOOK_SECRETS_KEY): the database row does not hold the secret.
    const stored = await svc.store.webhooks.get(id);
    expect(stored!.secrets[0]!.secret.startsWith('enc1:')).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(secret.slice('whsec_'.length));
  });
});

/**
 * `verifyWebhook` of the typed client: against the Standard Webhooks test vector, against requests
 * signed by an independent implementation (node:crypto here, nothing from src/), and against the
 * service's own deliveries (the dispatcher posting to a loopback receiver).
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { newEndpointId, newSecret, SecretBox, WebhookDispatcher } from '../../src/webhooks/index.js';
import { startReceiver } from '../webhooks/receiver.js';
import { silentLog } from '../../src/domain/log.js';

const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason;
    throw e;
  }
  return 'accepted';
};

/** Signs like the Standard Webhooks specification says, independently of the service. */
function independentSign(secret: string, id: string, ts: number, body: string): string {
  return `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${ts}.${body}`)
    .digest('base64')}`;
}

const body = JSON.stringify({
  type: 'article.created',
  timestamp: '2026-11-24T14:09:59.871Z',
  data: {
    id: '01JD0Q2V5N8Y3C7KQ4W9M6T1ZB',
    content: 'Fed holds',
    urgency: 'breaking',
    sentiment: null,
    published_at: null,
    received_at: '2026-11-24T14:09:59.871Z',
  },
});

describe('verifyWebhook: signatures per the Standard Webhooks specification', () => {
  it("accepts the specification's test vector signature (the body is not ours, so it stops at the body check)", () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const verify = () =>
      verifyWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', headers, '{"test": 2432232314}', {
        nowSeconds: 1614265330,
      });
    expect(reason(verify)).toBe('body');
    expect(
      reason(() =>
        verifyWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', headers, '{"test": 2432232315}', {
          nowSeconds: 1614265330,
        }),
      ),
    ).toBe('signature');
  });

  it('returns the typed message signed by an independent implementation; fetch Headers work too', () => {
    const secret = newSecret();
    const ts = 1_732_457_400;
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': independentSign(secret, 'msg_1', ts, body),
    };
    const m = verifyWebhook(secret, headers, body, { nowSeconds: ts + 10 });
    expect(m.type).toBe('article.created');
    expect(m.data.content).toBe('Fed holds');
    expect(verifyWebhook(secret, new Headers(headers), Buffer.from(body), { nowSeconds: ts }).data.id).toBe(
      '01JD0Q2V5N8Y3C7KQ4W9M6T1ZB',
    );
  });

  it('throws on a wrong secret, a changed body, a changed id, and a timestamp more than 5 minutes off', () => {
    const secret = newSecret();
    const ts = 1_732_457_400;
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': independentSign(secret, 'msg_1', ts, body),
    };
    expect(reason(() => verifyWebhook(newSecret(), headers, body, { nowSeconds: ts }))).toBe('signature');
    expect(
      reason(() => verifyWebhook(secret, headers, body.replace('Fed holds', 'Fed hikes'), { nowSeconds: ts })),
    ).toBe('signature');
    expect(reason(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_2' }, body, { nowSeconds: ts }))).toBe(
      'signature',
    );
    expect(reason(() => verifyWebhook(secret, headers, body, { nowSeconds: ts + 300 }))).toBe('accepted');
    expect(reason(() => verifyWebhook(secret, headers, body, { nowSeconds: ts + 301 }))).toBe('timestamp');
    expect(reason(() => verifyWebhook(secret, headers, body, { nowSeconds: ts - 301 }))).toBe('timestamp');
    expect(reason(() => verifyWebhook(secret, { 'webhook-id': 'msg_1' }, body))).toBe('headers');
  });

  it('accepts any one of several signatures (a rotation), and ignores other versions', () => {
    const oldS = newSecret();
    const newS = newSecret();
    const ts = 1_732_457_400;
    const sig = `v2,xyz ${independentSign(newS, 'msg_1', ts, body)} ${independentSign(oldS, 'msg_1', ts, body)}`;
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': sig };
    expect(reason(() => verifyWebhook(oldS, headers, body, { nowSeconds: ts }))).toBe('accepted');
    expect(reason(() => verifyWebhook(newS, headers, body, { nowSeconds: ts }))).toBe('accepted');
  });
});

describe("verifyWebhook on the service's own deliveries", () => {
  it('verifies every request the dispatcher sends and returns the article as the tier sees it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fns-sdk-wh-'));
    const store = new SqliteStore(join(dir, 'fns.sqlite'));
    const receiver = await startReceiver();
    const box = new SecretBox(Buffer.alloc(32, 1));
    const dispatcher = new WebhookDispatcher({
      store,
      secrets: box,
      allowPrivate: true,
      recheckMs: 60_000,
      feedPollMs: 10,
      refreshMs: 50,
      flushMs: 10,
      log: silentLog,
    });
    try {
      const acct = await store.accounts.createAccount('max', Date.now());
      const secret = newSecret();
      await store.webhooks.add(
        { id: newEndpointId(), accountId: acct.id, url: receiver.url, tickers: null, secret: box.seal(secret) },
        Date.now(),
      );
      await dispatcher.start();
      await store.articles.insert(
        [
          {
            content: 'Apple beats',
            urgency: 'flash',
            sentiment: 'positive',
            published_at: null,
            tickers: [{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }],
          },
          { content: 'Oil slips', urgency: 'regular', sentiment: null, published_at: null, tickers: [] },
        ],
        Date.now(),
      );
      const got = await receiver.waitFor(2);
      const messages = got.map((r) => verifyWebhook(secret, r.headers as Record<string, string>, r.body));
      expect(messages.map((m) => [m.type, m.data.content, m.data.tickers])).toEqual([
        ['article.created', 'Apple beats', [{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }]],
        ['article.created', 'Oil slips', []],
      ]);
      expect(reason(() => verifyWebhook(newSecret(), got[0]!.headers as Record<string, string>, got[0]!.body))).toBe(
        'signature',
      );
    } finally {
      await dispatcher.stop();
      await receiver.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The pure rules of src/webhooks: retry schedule, destination addresses, signing, secrets at rest. */
import { describe, expect, it } from 'vitest';
import { webhookRules } from '../../src/contract/index.js';
import { baseDelay, CONTRACT_RETRY_RULES, nextRetry } from '../../src/webhooks/schedule.js';
import { checkUrlShape, DestinationError, isNonPublicAddress, resolveDestination } from '../../src/webhooks/address.js';
import { newSecret, signatureFor, signedHeaders } from '../../src/webhooks/signing.js';
import { SecretBox } from '../../src/webhooks/secrets.js';
import { messageId, newEndpointId } from '../../src/webhooks/message.js';
import { pauseForPlan } from '../../src/webhooks/plan.js';
import { PREVIOUS_SECRETS_MAX, rotateSecrets, signingSecrets } from '../../src/domain/webhook-secrets.js';
import { independentlyVerified } from './receiver.js';

const T0 = Date.parse('2026-11-24T12:00:00Z');
const MIN = 60_000;

describe('retry schedule: about 1 s, 5 s, 30 s, 2 min, 10 min, then every 30 min for 24 h', () => {
  it('reads its delays from the contract', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 40].map((n) => baseDelay(n))).toEqual([
      1000,
      5000,
      30_000,
      2 * MIN,
      10 * MIN,
      30 * MIN,
      30 * MIN,
      30 * MIN,
    ]);
    expect(CONTRACT_RETRY_RULES.giveUpAfterMs).toBe(24 * 60 * MIN);
  });

  it('jitters each delay by at most the contract ratio, both ways', () => {
    const at = (failures: number, r: number) => {
      const d = nextRetry(failures, T0, T0, () => r);
      if (!d.retry) throw new Error('gave up');
      return d.at - T0;
    };
    expect(at(2, 0)).toBe(5000 * (1 - webhookRules.jitterRatio));
    expect(at(2, 0.5)).toBe(5000);
    expect(at(2, 0.999999)).toBeCloseTo(5000 * (1 + webhookRules.jitterRatio), -1);
  });

  it('retries until the failure run is 24 h old, then gives up with a reason', () => {
    expect(nextRetry(50, T0, T0 + 24 * 60 * MIN - 1, () => 0.5)).toEqual({
      retry: true,
      at: T0 + 24 * 60 * MIN - 1 + 30 * MIN,
    });
    const d = nextRetry(51, T0, T0 + 24 * 60 * MIN, () => 0.5);
    expect(d).toEqual({ retry: false, reason: 'failing since 2026-11-24T12:00:00.000Z (51 attempts over 24 h)' });
  });

  it('a whole-day outage: the first attempt, 5 quick retries, then one every 30 min until 24 h: 54 attempts', () => {
    let now = T0;
    let n = 0;
    for (;;) {
      n++;
      const d = nextRetry(n, T0, now, () => 0.5);
      if (!d.retry) break;
      now = d.at;
    }
    expect(n).toBe(54);
  });
});

describe('destinations: https on a public address, checked after DNS resolution', () => {
  it('knows private, loopback, link-local and other non-public addresses (IPv4, IPv6, mapped)', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::',
    ]) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isNonPublicAddress(a), a).toBe(false);
  });

  it('refuses a host name resolving to 127.0.0.1 without WEBHOOK_ALLOW_PRIVATE, allows it with', async () => {
    const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const url = new URL('https://hooks.partner.example/in');
    await expect(resolveDestination(url, false, lookup)).rejects.toThrow(
      /hooks\.partner\.example resolves to 127\.0\.0\.1, a private, loopback or link-local address/,
    );
    await expect(resolveDestination(url, true, lookup)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('refuses a name when any of its addresses is private (no picking the public one)', async () => {
    const lookup = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
    await expect(resolveDestination(new URL('https://mixed.example/'), false, lookup)).rejects.toBeInstanceOf(
      DestinationError,
    );
  });

  it('refuses the real localhost name and literal private addresses', async () => {
    await expect(resolveDestination(new URL('https://localhost/x'), false)).rejects.toThrow(
      /private, loopback or link-local/,
    );
    await expect(resolveDestination(new URL('https://[::1]/x'), false)).rejects.toThrow(/::1/);
    await expect(resolveDestination(new URL('https://169.254.169.254/latest'), false)).rejects.toThrow(
      /169\.254\.169\.254/,
    );
  });

  it('requires https unless private destinations are allowed; never credentials', () => {
    expect(() => checkUrlShape('http://hooks.example.com/', false)).toThrow(/must use https/);
    expect(checkUrlShape('http://127.0.0.1:9/', true).protocol).toBe('http:');
    expect(() => checkUrlShape('https://user:pw@hooks.example.com/', false)).toThrow(/credentials/);
    expect(() => checkUrlShape('ftp://hooks.example.com/', true)).toThrow(/https or http/);
    expect(() => checkUrlShape('not a url', false)).toThrow(/not a URL/);
  });
});

describe('signing: Standard Webhooks v1', () => {
  it("reproduces the specification's published test vector", () => {
    expect(
      signatureFor(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs with every secret during a rotation, space-separated; an independent verifier accepts each secret alone', () => {
    const a = newSecret();
    const b = newSecret();
    const h = signedHeaders([a, b], 'msg_1', 1_732_450_000, '{"x":1}');
    expect(h['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(independentlyVerified(a, h, '{"x":1}')).toBe(true);
    expect(independentlyVerified(b, h, '{"x":1}')).toBe(true);
    expect(independentlyVerified(newSecret(), h, '{"x":1}')).toBe(false);
    expect(independentlyVerified(a, h, '{"x":2}')).toBe(false);
  });

  it('new secrets are whsec_ and 32 random bytes; ids fit the contract patterns', () => {
    const s = newSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    const id = messageId(newEndpointId(), '01JD0Q2V5N8Y3C7KQ4W9M6T1ZB');
    expect(id).toMatch(/^msg_[0-9A-Za-z]{1,64}$/);
  });
});

describe('signing secrets: the current one and at most 3 previous ones still in their overlap', () => {
  const DAY = 24 * 60 * MIN;

  it('a rotation keeps the 3 newest previous secrets and says which older ones it dropped', () => {
    let list: { secret: string; expiresAt: number | null }[] = [{ secret: 's0', expiresAt: null }];
    const dropped: string[] = [];
    for (let i = 1; i <= 6; i++) {
      const r = rotateSecrets(list, `s${i}`, T0 + i * MIN, DAY);
      list = r.secrets;
      dropped.push(...r.dropped);
    }
    expect(PREVIOUS_SECRETS_MAX).toBe(3);
    expect(list.map((s) => s.secret)).toEqual(['s6', 's5', 's4', 's3']);
    expect(dropped).toEqual(['s0', 's1', 's2']);
  });

  it('expired secrets neither count against the bound nor are reported as dropped', () => {
    const r = rotateSecrets(
      [
        { secret: 'b', expiresAt: null },
        { secret: 'a', expiresAt: T0 - 1 },
      ],
      'c',
      T0,
      DAY,
    );
    expect(r).toEqual({
      secrets: [
        { secret: 'c', expiresAt: null },
        { secret: 'b', expiresAt: T0 + DAY },
      ],
      dropped: [],
    });
  });

  it('a list stored before the bound (500 valid secrets) still signs with the newest 4 only: a header of about 200 bytes', () => {
    const stored = Array.from({ length: 500 }, (_, i) => ({
      secret: newSecret(),
      expiresAt: i === 0 ? null : T0 + DAY,
    }));
    const signing = signingSecrets(stored, T0);
    expect(signing).toEqual(stored.slice(0, 1 + PREVIOUS_SECRETS_MAX));
    const h = signedHeaders(
      signing.map((s) => s.secret),
      'msg_1',
      T0 / 1000,
      '{}',
    );
    expect(h['webhook-signature']!.length).toBeLessThan(256);
    expect(signingSecrets(stored, T0 + DAY).map((s) => s.secret)).toEqual([stored[0]!.secret]);
  });
});

describe("plan: the stream's tiers, and a ticker filter is never dropped to fit a lower plan", () => {
  it('pro and max deliver; a filter needs max; another plan pauses with the reason', () => {
    expect(pauseForPlan('max', ['AAPL'])).toBeNull();
    expect(pauseForPlan('pro', null)).toBeNull();
    expect(pauseForPlan('max', null)).toBeNull();
    expect(pauseForPlan('pro', ['AAPL', 'MSFT'])).toMatch(
      /^the account's plan \(pro\) does not include ticker filters \(max only\); the filter AAPL,MSFT is kept and nothing is sent unfiltered/,
    );
    expect(pauseForPlan('starter', null)).toBe(
      "the account's plan (starter) does not include webhooks (pro or max only)",
    );
    expect(pauseForPlan('expired', ['AAPL'])).toMatch(/does not include webhooks/);
  });
});

describe('secrets at rest: encrypted with WEBHOOK_SECRETS_KEY, as given without it', () => {
  it('seals and opens; the sealed text does not contain the secret', () => {
    const box = new SecretBox(Buffer.alloc(32, 7));
    const s = newSecret();
    const sealed = box.seal(s);
    expect(sealed.startsWith('enc1:')).toBe(true);
    expect(sealed).not.toContain(s.slice(6));
    expect(box.open(sealed)).toBe(s);
    expect(() => new SecretBox().open(sealed)).toThrow(/WEBHOOK_SECRETS_KEY/);
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow();
    expect(new SecretBox().open(new SecretBox().seal(s))).toBe(s);
  });
});

describe('sender: one request, nothing left behind', () => {
  it('leaves no listener on the shared stop signal once requests are answered, and aborts the open ones on stop', async () => {
    const { EventEmitter } = await import('node:events');
    const getEventListeners = EventEmitter.getEventListeners;
    const { httpSender } = await import('../../src/webhooks/sender.js');
    const { startReceiver } = await import('./receiver.js');
    const rx = await startReceiver((n) => (n < 5 ? 200 : 'hang'));
    try {
      const stop = new AbortController();
      const req = () => ({
        url: new URL(rx.url),
        address: { address: '127.0.0.1', family: 4 },
        headers: {},
        body: '{}',
        timeoutMs: 60_000,
        signal: stop.signal,
      });
      for (let i = 0; i < 5; i++) expect((await httpSender(req())).status).toBe(200);
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
      const hanging = httpSender(req());
      await rx.waitFor(6);
      stop.abort();
      expect(await hanging).toMatchObject({ status: null, error: 'aborted: the dispatcher is stopping' });
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    } finally {
      await rx.close();
    }
  });
});

describe('sender: the status line decides the outcome, the body is read briefly', () => {
  const req = (url: string, timeoutMs: number) => ({
    url: new URL(url),
    address: { address: '127.0.0.1', family: 4 },
    headers: {},
    body: '{}',
    timeoutMs,
  });

  it('a 200 whose body trickles forever is a success; its connection is cut once the short read is over', async () => {
    const { httpSender } = await import('../../src/webhooks/sender.js');
    const { startReceiver } = await import('./receiver.js');
    const { until } = await import('../support/wait.js');
    const rx = await startReceiver(() => ({ trickle: 200 }));
    try {
      // A trickle that never ends outlasts any send timeout: the answer is decided by its status line.
      expect(await httpSender(req(rx.url, 2000))).toMatchObject({ status: 200, error: null });
      await until(() => rx.trickleClosed === 1, 'the trickling answer cut off');
    } finally {
      await rx.close();
    }
  });

  it('a 500 whose body trickles is a failure with its status and the first bytes of its body', async () => {
    const { httpSender } = await import('../../src/webhooks/sender.js');
    const { startReceiver } = await import('./receiver.js');
    const rx = await startReceiver(() => ({ trickle: 500 }));
    try {
      const r = await httpSender(req(rx.url, 2000));
      expect(r).toMatchObject({ status: 500, error: expect.stringMatching(/^HTTP 500: answer 500 \.*$/) as unknown });
      // The latency is the answer's: its status line, not the reading of its body (which alone takes a second).
      expect(r.latencyMs).toBeLessThan(1000);
    } finally {
      await rx.close();
    }
  });
});

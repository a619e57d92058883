/** The pure rules of src/webhooks: retry schedule, destination addresses, signing, secrets at rest. */
import { describe, expect, it } from 'vitest';
import { webhookRules } from '../../src/contract/index.js';
import { baseDelay, CONTRACT_RETRY_RULES, nextRetry } from '../../src/webhooks/schedule.js';
import { checkUrlShape, DestinationError, isNonPublicAddress, resolveDestination } from '../../src/webhooks/address.js';
import { newSecret, signatureFor, signedHeaders } from '../../src/webhooks/signing.js';
import { SecretBox } from '../../src/webhooks/secrets.js';
import { messageId, newEndpointId } from '../../src/webhooks/message.js';
import { independentlyVerified } from './receiver.js';

const T0 = Date.parse('2026-11-24T12:00:00Z');
const MIN = 60_000;

describe('retry schedule: about 1 s, 5 s, 30 s, 2 min, 10 min, then every 30 min for 24 h', () => {
  it('reads its delays from the contract', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 40].map((n) => baseDelay(n))).toEqual([1000, 5000, 30_000, 2 * MIN, 10 * MIN, 30 * MIN, 30 * MIN, 30 * MIN]);
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
    expect(nextRetry(50, T0, T0 + 24 * 60 * MIN - 1, () => 0.5)).toEqual({ retry: true, at: T0 + 24 * 60 * MIN - 1 + 30 * MIN });
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
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::']) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isNonPublicAddress(a), a).toBe(false);
  });

  it('refuses a host name resolving to 127.0.0.1 without WEBHOOK_ALLOW_PRIVATE, allows it with', async () => {
    const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const url = new URL('https://hooks.partner.example/in');
    await expect(resolveDestination(url, false, lookup)).rejects.toThrow(/hooks\.partner\.example resolves to 127\.0\.0\.1, a private, loopback or link-local address/);
    await expect(resolveDestination(url, true, lookup)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('refuses a name when any of its addresses is private (no picking the public one)', async () => {
    const lookup = async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }];
    await expect(resolveDestination(new URL('https://mixed.example/'), false, lookup)).rejects.toBeInstanceOf(DestinationError);
  });

  it('refuses the real localhost name and literal private addresses', async () => {
    await expect(resolveDestination(new URL('https://localhost/x'), false)).rejects.toThrow(/private, loopback or link-local/);
    await expect(resolveDestination(new URL('https://[::1]/x'), false)).rejects.toThrow(/::1/);
    await expect(resolveDestination(new URL('https://169.254.169.254/latest'), false)).rejects.toThrow(/169\.254\.169\.254/);
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
    expect(signatureFor('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
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
      const req = () => ({ url: new URL(rx.url), address: { address: '127.0.0.1', family: 4 }, headers: {}, body: '{}', timeoutMs: 60_000, signal: stop.signal });
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

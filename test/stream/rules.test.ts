/** The pure rules behind the stream: admission, re-check, key and address extraction, slots, frames. */
import express from 'express';
import { describe, expect, it } from 'vitest';
import type { Writable } from 'node:stream';
import * as wsModule from 'ws';
import { limits, plans, stream, tiers, type Tier } from '../../src/contract/index.js';
import type { AccountRecord } from '../../src/domain/tiers.js';
import { admissionOutcome, clientIpResolver, keyFromRequest, recheckOutcome } from '../../src/stream/admission.js';
import { originForm, pathOnly } from '../../src/http/target.js';
import { textFrames } from '../../src/delivery/frames.js';
import { MemoryStreamSlots } from '../../src/state/stream-slots.js';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const caller = (tier: Tier) => ({ ok: true as const, caller: { keyId: 'key_1', accountId: 'acct_1', tier } });
const account = (tier: Tier, cancelledAt: string | null = null): AccountRecord => ({
  id: 'acct_1',
  tier,
  periodEnd: null,
  cancelledAt,
});
const activeKey = { keyId: 'key_1', accountId: 'acct_1', active: true };

describe('rules: admission decision from the authentication result and the plan table', () => {
  it('admits exactly the tiers whose plan has the stream, with tickers as the plan says', () => {
    for (const tier of tiers) {
      const out = admissionOutcome(caller(tier));
      if (plans[tier].stream)
        expect(out).toEqual({ ok: true, keyId: 'key_1', accountId: 'acct_1', tier, withTickers: plans[tier].tickers });
      else expect(out).toEqual({ ok: false, close: stream.closeCodes.planRequired });
    }
    expect(tiers.filter((t) => plans[t].stream)).toEqual(['pro', 'max']);
  });

  it('maps an invalid key to "Invalid API key" and an inactive key, free tier or blocked IP to "API key is inactive"', () => {
    expect(admissionOutcome({ ok: false, problem: 'invalidApiKey' })).toEqual({
      ok: false,
      close: stream.closeCodes.invalidKey,
    });
    expect(admissionOutcome({ ok: false, problem: 'inactiveApiKey' })).toEqual({
      ok: false,
      close: stream.closeCodes.inactiveKey,
    });
    expect(
      admissionOutcome({ ok: false, problem: 'inactiveApiKey', retryAfterSeconds: limits.ipGuard.blockMs / 1000 }),
    ).toEqual({ ok: false, close: stream.closeCodes.inactiveKey });
  });
});

describe('rules: re-check decision from the stored key and account', () => {
  it('keeps pro and max, switching the tickers variant with the plan', () => {
    expect(recheckOutcome(activeKey, account('pro'), NOW)).toEqual({ ok: true, tier: 'pro', withTickers: false });
    expect(recheckOutcome(activeKey, account('max'), NOW)).toEqual({ ok: true, tier: 'max', withTickers: true });
  });

  it('ends starter, free, cancelled (expired), deactivated, deleted and foreign records with "Subscription expired"', () => {
    const end = { ok: false, close: stream.closeCodes.subscriptionExpired };
    expect(recheckOutcome(activeKey, account('starter'), NOW)).toEqual(end);
    expect(recheckOutcome(activeKey, account('free'), NOW)).toEqual(end);
    expect(recheckOutcome(activeKey, account('max', new Date(NOW - 1000).toISOString()), NOW)).toEqual(end);
    expect(recheckOutcome({ ...activeKey, active: false }, account('max'), NOW)).toEqual(end);
    expect(recheckOutcome(undefined, account('max'), NOW)).toEqual(end);
    expect(recheckOutcome(activeKey, undefined, NOW)).toEqual(end);
    expect(recheckOutcome({ ...activeKey, accountId: 'acct_2' }, account('max'), NOW)).toEqual(end);
  });
});

describe('rules: the key comes from api_key, else X-API-Key; the address as Express computes req.ip', () => {
  it('takes the query parameter first, then the header, and treats empty as missing', () => {
    expect(keyFromRequest('/v1/stream?api_key=q', { 'x-api-key': 'h' })).toBe('q');
    expect(keyFromRequest('/v1/stream', { 'x-api-key': 'h' })).toBe('h');
    expect(keyFromRequest('/v1/stream?api_key=', { 'x-api-key': 'h' })).toBe('h');
    expect(keyFromRequest('/v1/stream?api_key=a%2Bb', {})).toBe('a+b');
    expect(keyFromRequest('/v1/stream', {})).toBeUndefined();
    expect(keyFromRequest('/v1/stream', { 'x-api-key': '' })).toBeUndefined();
  });

  it('gives no key when api_key is given twice', () => {
    expect(keyFromRequest('/v1/stream?api_key=a&api_key=b', {})).toBeUndefined();
    expect(keyFromRequest('/v1/stream?api_key=a&api_key=a', {})).toBeUndefined();
    expect(keyFromRequest('/v1/stream?api_key=a&api_key=', {})).toBeUndefined();
  });

  it('compares the path without the query string, the absolute form reduced to its path', () => {
    expect(pathOnly('/v1/stream?api_key=x')).toBe('/v1/stream');
    expect(pathOnly('/v1/stream')).toBe('/v1/stream');
    expect(originForm('http://127.0.0.1:8080/v1/stream?api_key=x')).toEqual({ ok: true, url: '/v1/stream?api_key=x' });
    expect(originForm(undefined).ok).toBe(false);
  });

  it('uses the socket address unless proxies are trusted, then the X-Forwarded-For rules of Express', () => {
    const headers = { 'x-forwarded-for': '203.0.113.7, 198.51.100.2' };
    expect(clientIpResolver(false)(headers, '127.0.0.1')).toBe('127.0.0.1');
    expect(clientIpResolver(true)(headers, '127.0.0.1')).toBe('203.0.113.7');
    expect(clientIpResolver(true)({}, '127.0.0.1')).toBe('127.0.0.1');
    expect(clientIpResolver(1)(headers, '127.0.0.1')).toBe('198.51.100.2');
    expect(clientIpResolver('loopback')(headers, '127.0.0.1')).toBe('198.51.100.2');
    expect(clientIpResolver('loopback, 198.51.100.0/24')(headers, '127.0.0.1')).toBe('203.0.113.7');
    expect(clientIpResolver('loopback')(headers, '192.0.2.1')).toBe('192.0.2.1');
  });

  it('gives the address Express gives req.ip for REST, for every TRUST_PROXY form', () => {
    const settings: (boolean | number | string)[] = [
      false,
      true,
      0,
      1,
      2,
      5,
      'loopback',
      'loopback, 198.51.100.0/24',
      'uniquelocal',
      '10.0.0.1,127.0.0.1',
      '::1',
    ];
    const forwarded = [
      undefined,
      '203.0.113.7',
      '203.0.113.7, 198.51.100.2',
      ' 203.0.113.7 ,10.0.0.1, 127.0.0.1',
      'not-an-address',
      '2001:db8::1, 198.51.100.2',
    ];
    const peers = ['127.0.0.1', '10.0.0.1', '192.0.2.1', '::1', '::ffff:127.0.0.1'];
    for (const setting of settings) {
      const app = express();
      app.set('trust proxy', setting);
      const express_ip = (headers: Record<string, string>, remoteAddress: string) =>
        (
          Object.create(app.request, { headers: { value: headers }, socket: { value: { remoteAddress } } }) as {
            ip: string;
          }
        ).ip;
      const ours = clientIpResolver(setting);
      for (const xff of forwarded)
        for (const peer of peers) {
          const headers: Record<string, string> = xff === undefined ? {} : { 'x-forwarded-for': xff };
          expect(ours(headers, peer), `${String(setting)} | ${xff} | ${peer}`).toBe(express_ip(headers, peer));
        }
    }
  });
});

describe('rules: slots give each account the contract number of connections', () => {
  const perAccount = stream.connectionsPerAccount;
  it(`grants ${perAccount} slot(s) per account, independent of other accounts, and gives them back on release`, async () => {
    const slots = new MemoryStreamSlots();
    for (let i = 1; i <= perAccount; i++) expect(await slots.tryAcquire('a', `held${i}`)).toBe(true);
    expect(await slots.tryAcquire('a', 'c2')).toBe(false);
    expect(await slots.tryAcquire('b', 'c3')).toBe(true);
    await slots.release('a', 'c2'); // not the holder: nothing changes
    expect(await slots.tryAcquire('a', 'c4')).toBe(false);
    await slots.release('a', 'held1');
    expect(await slots.tryAcquire('a', 'c4')).toBe(true);
    expect(slots.inUse()).toBe(perAccount + 1);
  });

  it(`lets exactly ${perAccount} of many simultaneous attempts win`, async () => {
    const slots = new MemoryStreamSlots();
    const wins = await Promise.all(Array.from({ length: 100 }, (_, i) => slots.tryAcquire('a', `c${i}`)));
    expect(wins.filter(Boolean)).toHaveLength(perAccount);
  });
});

describe('rules: frames are unmasked final text frames that a WebSocket client decodes', () => {
  it('encodes the three length forms (7-bit, 16-bit, 64-bit) and multi-byte UTF-8', async () => {
    const messages = ['', 'a'.repeat(125), 'b'.repeat(126), 'c'.repeat(65_535), 'd'.repeat(65_536), 'é€😀 "json"'];
    const buf = textFrames(messages);
    expect(buf[0]).toBe(0x81);
    expect(buf[1]).toBe(0); // unmasked, empty
    const decoded: string[] = [];
    // ws's own frame parser (exported at runtime, not in @types/ws), as a client uses it.
    const Receiver = (wsModule as unknown as { Receiver: new (o: object) => Writable }).Receiver;
    const receiver = new Receiver({ isServer: false, maxPayload: 0 });
    receiver.on('message', (data: Buffer, isBinary: boolean) => {
      expect(isBinary).toBe(false);
      decoded.push(data.toString('utf8'));
    });
    await new Promise<void>((resolve, reject) => {
      receiver.on('error', reject);
      receiver.write(buf, () => resolve());
    });
    expect(decoded).toEqual(messages);
  });
});

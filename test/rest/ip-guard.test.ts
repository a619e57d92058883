/** The IP guard's operator controls: exempt addresses, and a log line for every block. */
import { afterEach, describe, expect, it } from 'vitest';
import { limits, problems } from '../../src/contract/index.js';
import { exemptionMatcher } from '../../src/domain/ip-guard.js';
import { get, startTestService, type TestService } from '../support/service.js';

let svc: TestService | undefined;
afterEach(async () => svc?.close());

const { distinctKeys, blockMs } = limits.ipGuard;

describe('IP_GUARD_EXEMPT: addresses the guard never blocks', () => {
  it('matches loopback, single addresses and subnets, IPv4-mapped IPv6 included', () => {
    const exempt = exemptionMatcher(['loopback', '10.1.0.0/16', '2001:db8::7']);
    for (const a of [
      '127.0.0.1',
      '127.200.3.4',
      '::1',
      '::ffff:127.0.0.1',
      '10.1.255.255',
      '::ffff:10.1.2.3',
      '2001:db8::7',
    ])
      expect(exempt(a), a).toBe(true);
    for (const a of ['128.0.0.1', '10.2.0.1', '2001:db8::8', 'unknown', '']) expect(exempt(a), a).toBe(false);
    expect(exemptionMatcher([])('127.0.0.1')).toBe(false);
  });

  it('lets an exempt address use any number of keys while another address is still blocked', async () => {
    svc = await startTestService({ ipGuard: { exempt: ['127.50.0.0/16'] } });
    const keys = await Promise.all(Array.from({ length: distinctKeys + 2 }, () => svc!.key('pro')));
    for (const k of keys) expect((await get(svc.port, '/v1/news', { key: k.key, ip: '127.50.0.9' })).status).toBe(200);
    const statuses = [];
    for (const k of keys) statuses.push((await get(svc.port, '/v1/news', { key: k.key, ip: '127.51.0.9' })).status);
    expect(statuses.slice(0, distinctKeys - 1).every((s) => s === 200)).toBe(true);
    expect(statuses[distinctKeys - 1]).toBe(problems.inactiveApiKey.status);
  });
});

describe('every block is logged once, with the address and its end, never a key', () => {
  it('reports the block when it starts, not on every refused request', async () => {
    const blocks: { ip: string; until: number }[] = [];
    svc = await startTestService({ ipGuard: { onBlock: (ip, until) => blocks.push({ ip, until }) } });
    const keys = await Promise.all(Array.from({ length: distinctKeys + 1 }, () => svc!.key('pro')));
    for (const k of keys) await get(svc.port, '/v1/news', { key: k.key, ip: '127.60.0.1' });
    expect(blocks).toEqual([{ ip: '127.60.0.1', until: svc.clock.now + blockMs }]);
  });
});

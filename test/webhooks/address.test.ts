/**
 * Webhook destinations are judged by the shared address rules (src/net): every IPv6 spelling of a
 * loopback or private address is refused, literal or resolved, with the address and its class named.
 */
import { describe, expect, it } from 'vitest';
import { DestinationError, isNonPublicAddress, resolveDestination } from '../../src/webhooks/address.js';

describe('a webhook URL naming a loopback or private address in an IPv6 spelling is refused', () => {
  it.each([
    [
      'https://[::127.0.0.1]/in',
      /::7f00:1, a private, loopback or link-local address: a deprecated IPv4-compatible address/,
    ],
    ['https://[::ffff:0:127.0.0.1]/in', /IPv4-translated/],
    ['https://[::ffff:7f00:1]/in', /IPv4-mapped address \(::ffff:0:0\/96\) of 127\.0\.0\.1, a loopback/],
    ['https://[2002:7f00:0001::]/in', /6to4 address \(2002::\/16\) of 127\.0\.0\.1, a loopback/],
    ['https://[fec0::1]/in', /deprecated site-local/],
    ['https://[64:ff9b::a00:1]/in', /NAT64 .* of 10\.0\.0\.1, a private/],
    ['https://[64:ff9b:1::1]/in', /local-use NAT64/],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/in', /Teredo/],
  ])('%s', async (url, names) => {
    const refused = resolveDestination(new URL(url), false);
    await expect(refused).rejects.toBeInstanceOf(DestinationError);
    await expect(refused).rejects.toThrow(names);
    await expect(refused).rejects.toThrow(/allowed only with WEBHOOK_ALLOW_PRIVATE=true/);
  });

  it('a host name resolving to such a spelling is refused the same way', async () => {
    const lookup = async () => [{ address: '2002:a9fe:a9fe::1', family: 6 }];
    await expect(resolveDestination(new URL('https://hooks.partner.example/in'), false, lookup)).rejects.toThrow(
      'hooks.partner.example resolves to 2002:a9fe:a9fe::1, a private, loopback or link-local address: a 6to4 address (2002::/16) of 169.254.169.254, a link-local address (169.254.0.0/16)',
    );
  });

  it('the webhook face of the rule answers as the shared one', () => {
    for (const a of ['::7f00:1', '::ffff:0:7f00:1', '2002:7f00:1::', 'fec0::1'])
      expect(isNonPublicAddress(a), a).toBe(true);
    expect(isNonPublicAddress('2606:4700:4700::1111')).toBe(false);
  });
});

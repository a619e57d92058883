/**
 * The one reading of an IP address for every outgoing request (src/net): any spelling of a non-public
 * address is refused, the way Node hands it over (a URL's compressed hostname, a resolver's answer).
 */
import { describe, expect, it } from 'vitest';
import {
  AddressRefused,
  ipv6Bytes,
  isNonPublicAddress,
  nonPublicReason,
  pinnedLookup,
  resolveChecked,
  ResolveError,
} from '../../src/net/index.js';

/** The address as Node gives it for `http://[spelling]/`: the URL parser's compressed form. */
const fromUrl = (spelling: string): string =>
  new URL(`http://${spelling.includes(':') ? `[${spelling}]` : spelling}/`).hostname.replace(/^\[|\]$/g, '');

describe('IPv6 text is read into its 16 bytes, whatever the spelling', () => {
  it('full, compressed, upper case and with a trailing dotted IPv4 are the same address', () => {
    const loopbackMapped = [...ipv6Bytes('::ffff:7f00:1')!];
    for (const s of [
      '0:0:0:0:0:ffff:7f00:1',
      '::FFFF:7F00:0001',
      '::ffff:127.0.0.1',
      '0000:0000:0000:0000:0000:ffff:127.0.0.1',
      '[::ffff:7f00:1]',
    ]) {
      expect([...ipv6Bytes(s)!], s).toEqual(loopbackMapped);
    }
  });
  it('a zone is not part of the address', () => {
    expect([...ipv6Bytes('fe80::1%eth0')!]).toEqual([...ipv6Bytes('fe80::1')!]);
  });
  it('what is not an IPv6 address is null', () => {
    for (const s of [
      '',
      ':',
      ':::',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      '12345::',
      '1.2.3.4::',
      '::1.2.3.4:5',
      '::256.0.0.1',
      '::01.2.3.4',
      'g::1',
      'localhost',
    ]) {
      expect(ipv6Bytes(s), s).toBeNull();
    }
  });
});

describe('IPv6 spellings that carry a loopback or private IPv4 address are not public', () => {
  const cases: [spelling: string, names: RegExp][] = [
    ['::127.0.0.1', /deprecated IPv4-compatible address \(::\/96\)/],
    ['::7f00:1', /deprecated IPv4-compatible/],
    ['::ffff:0:127.0.0.1', /IPv4-translated address \(::ffff:0:0:0\/96\)/],
    ['::ffff:127.0.0.1', /IPv4-mapped address \(::ffff:0:0\/96\) of 127\.0\.0\.1, a loopback address/],
    ['::ffff:7f00:1', /IPv4-mapped .* of 127\.0\.0\.1, a loopback/],
    ['0:0:0:0:0:FFFF:0A00:0001', /IPv4-mapped .* of 10\.0\.0\.1, a private address \(10\.0\.0\.0\/8\)/],
    ['::ffff:a9fe:a9fe', /of 169\.254\.169\.254, a link-local address/],
    ['2002:7f00:0001::', /6to4 address \(2002::\/16\) of 127\.0\.0\.1, a loopback address/],
    ['2002:c0a8:0101::1', /6to4 .* of 192\.168\.1\.1, a private address/],
    ['64:ff9b::127.0.0.1', /NAT64 address \(64:ff9b::\/96\) of 127\.0\.0\.1, a loopback/],
    ['64:ff9b::a00:1', /NAT64 .* of 10\.0\.0\.1, a private/],
    ['64:ff9b:1::a00:1', /local-use NAT64 address \(64:ff9b:1::\/48\)/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo address \(2001::\/32\)/],
    ['2001::7f00:1', /Teredo/],
  ];
  for (const [spelling, names] of cases) {
    it(`${spelling} (as the URL parser gives it: ${fromUrl(spelling)})`, () => {
      expect(nonPublicReason(spelling)).toMatch(names);
      expect(nonPublicReason(fromUrl(spelling))).toMatch(names);
      expect(isNonPublicAddress(fromUrl(spelling))).toBe(true);
    });
  }
  it('the same forms carrying a public IPv4 address are public (NAT64, 6to4, mapped), the deprecated ones are not', () => {
    for (const a of ['::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '2002:808:808::1'])
      expect(nonPublicReason(a), a).toBeNull();
    for (const a of ['::8.8.8.8', '::ffff:0:8.8.8.8']) expect(isNonPublicAddress(a), a).toBe(true);
  });
});

describe('every non-global range of the IANA special-purpose registries is not public', () => {
  const ipv4: [string, RegExp][] = [
    ['0.0.0.0', /"this network"/],
    ['0.1.2.3', /"this network"/],
    ['10.255.0.1', /private/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['169.254.169.254', /link-local/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.0.0.8', /IETF protocol assignment/],
    ['192.0.2.1', /documentation/],
    ['192.88.99.1', /deprecated 6to4 relay anycast/],
    ['192.168.1.1', /private/],
    ['198.18.0.1', /benchmarking/],
    ['198.19.255.255', /benchmarking/],
    ['198.51.100.7', /documentation/],
    ['203.0.113.9', /documentation/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /broadcast/],
  ];
  const ipv6: [string, RegExp][] = [
    ['::', /unspecified/],
    ['::1', /loopback address \(::1\/128\)/],
    ['0:0:0:0:0:0:0:1', /loopback/],
    ['100::1', /discard-only/],
    ['2001:db8::1', /documentation/],
    ['2001:2::1', /IETF protocol assignment/],
    ['3fff::1', /documentation/],
    ['5f00::1', /SRv6/],
    ['fc00::1', /unique-local/],
    ['fd12:3456::1', /unique-local/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['febf::1', /link-local/],
    ['fec0::1', /deprecated site-local address \(fec0::\/10\)/],
    ['feff::1', /site-local/],
    ['ff02::1', /multicast/],
    ['4000::1', /reserved/],
    ['::ffff:0:0:7f00:1', /reserved/],
  ];
  for (const [a, names] of [...ipv4, ...ipv6]) {
    it(`${a} is ${names.source.replace(/\\/g, '')}`, () => expect(nonPublicReason(a)).toMatch(names));
  }
  it('public unicast addresses are public', () => {
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '100.63.255.255',
      '100.128.0.0',
      '172.32.0.1',
      '192.0.3.1',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2a00:1450:4001::200e',
      '2001:200::1',
    ]) {
      expect(nonPublicReason(a), a).toBeNull();
    }
  });
  it('text that is not an address, or a dotted spelling other than plain decimal, is not public', () => {
    for (const a of [
      'localhost',
      '',
      '127.1',
      '0x7f.0.0.1',
      '0177.0.0.1',
      '127.000.000.001',
      '2130706433',
      '1.2.3.4.5',
      '256.1.1.1',
    ]) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
  });
});

describe('resolution: every address is checked, and the connection goes to the addresses checked', () => {
  const answering =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('a name resolving to a loopback address is refused, naming the address and its class', async () => {
    const refused = resolveChecked('feeds.example', false, answering('::ffff:7f00:1'));
    await expect(refused).rejects.toBeInstanceOf(AddressRefused);
    await expect(refused).rejects.toThrow(
      'feeds.example resolves to ::ffff:7f00:1, an IPv4-mapped address (::ffff:0:0/96) of 127.0.0.1, a loopback address (127.0.0.0/8)',
    );
  });
  it('one private address among public ones is enough to refuse the name', async () => {
    await expect(resolveChecked('mixed.example', false, answering('93.184.216.34', 'fec0::1'))).rejects.toThrow(
      /fec0::1, a deprecated site-local/,
    );
  });
  it('an IP literal is its own address, never looked up', async () => {
    const lookup = async () => {
      throw new Error('looked up');
    };
    await expect(resolveChecked('::7f00:1', false, lookup)).rejects.toThrow(
      '::7f00:1 is a deprecated IPv4-compatible address (::/96)',
    );
    await expect(resolveChecked('8.8.8.8', false, lookup)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
  });
  it('allowing private addresses lets them through', async () => {
    await expect(resolveChecked('feeds.example', true, answering('127.0.0.1'))).resolves.toEqual([
      { address: '127.0.0.1', family: 4 },
    ]);
  });
  it('a name that does not resolve is a ResolveError, not a refusal', async () => {
    await expect(
      resolveChecked('gone.example', false, async () => {
        throw new Error('ENOTFOUND');
      }),
    ).rejects.toBeInstanceOf(ResolveError);
    await expect(resolveChecked('empty.example', false, answering())).rejects.toThrow(
      'empty.example resolves to no address',
    );
  });
  it('the pinned lookup answers with the checked addresses only, one or all as asked', () => {
    const lookup = pinnedLookup([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    const one: unknown[] = [];
    lookup('anything.example', { family: 0 }, (...args: unknown[]) => one.push(args));
    expect(one).toEqual([[null, '93.184.216.34', 4]]);
    const all: unknown[] = [];
    lookup('anything.example', { all: true }, (...args: unknown[]) => all.push(args));
    expect(all).toEqual([
      [
        null,
        [
          { address: '93.184.216.34', family: 4 },
          { address: '2606:2800:220:1::1', family: 6 },
        ],
      ],
    ]);
    const v6: unknown[] = [];
    lookup('anything.example', { family: 6 }, (...args: unknown[]) => v6.push(args));
    expect(v6).toEqual([[null, '2606:2800:220:1::1', 6]]);
  });
});

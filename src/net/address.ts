/**
 * Which IP addresses are public, for every outgoing request made on an outsider's say-so (webhooks, feed polls,
 * redirects). Text is parsed to bytes before ranges are judged, so no spelling slips past a text pattern. Public is
 * global unicast per the IANA special-purpose registries (IPv4: RFC 6890 and updates; IPv6: only 2000::/3). IPv6 forms
 * carrying an IPv4 address (::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by it; the deprecated ones
 * (::/96, ::ffff:0:0:0/96, fec0::/10) and Teredo are never public.
 */

interface Range {
  bytes: Uint8Array;
  prefix: number;
}

/** A named non-public range; `embedsIpv4At`: where an IPv6 form carries the IPv4 address it is judged by. */
interface Named extends Range {
  cidr: string;
  label: string;
  embedsIpv4At?: number;
}

/** The bytes of a dotted-decimal IPv4 address (four parts of 0..255, no leading zeros), or null. */
export function ipv4Bytes(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

/** The 16 bytes of an IPv6 address in any RFC 4291 §2.2 form (`::`, dotted IPv4 tail, `%zone`, brackets), or null. */
export function ipv6Bytes(text: string): Uint8Array | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (s === '' || !/^[0-9A-Fa-f:.]+$/.test(s)) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (piece.includes('.')) {
        // A dotted IPv4 address may only close the address.
        if (i !== pieces.length - 1) return null;
        const v4 = ipv4Bytes(piece);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return null;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !tail) return null;
  // A dotted IPv4 part can only be the last of the whole address, never before the `::`.
  if (halves.length === 2 && halves[0]!.includes('.')) return null;
  const given = head.length + tail.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return null;
  const groups = [...head, ...new Array<number>(8 - given).fill(0), ...tail];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

function range(cidr: string, label: string, embedsIpv4At?: number): Named {
  const [net, len] = cidr.split('/') as [string, string];
  const bytes = net.includes(':') ? ipv6Bytes(net) : ipv4Bytes(net);
  if (!bytes) throw new Error(`bad range ${cidr}`);
  return { bytes, prefix: Number(len), cidr, label, ...(embedsIpv4At === undefined ? {} : { embedsIpv4At }) };
}

function inRange(bytes: Uint8Array, r: Range): boolean {
  if (bytes.length !== r.bytes.length) return false;
  const whole = r.prefix >> 3;
  for (let i = 0; i < whole; i++) if (bytes[i] !== r.bytes[i]) return false;
  const rest = r.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (bytes[whole]! & mask) === (r.bytes[whole]! & mask);
}

/** IPv4 ranges that are not global (IANA IPv4 Special-Purpose Address Registry) and multicast; first match names it. */
const IPV4: Named[] = [
  range('0.0.0.0/8', 'a "this network"'),
  range('10.0.0.0/8', 'a private'),
  range('100.64.0.0/10', 'a shared (carrier-grade NAT)'),
  range('127.0.0.0/8', 'a loopback'),
  range('169.254.0.0/16', 'a link-local'),
  range('172.16.0.0/12', 'a private'),
  range('192.0.0.0/24', 'an IETF protocol assignment'),
  range('192.0.2.0/24', 'a documentation'),
  range('192.88.99.0/24', 'a deprecated 6to4 relay anycast'),
  range('192.168.0.0/16', 'a private'),
  range('198.18.0.0/15', 'a benchmarking'),
  range('198.51.100.0/24', 'a documentation'),
  range('203.0.113.0/24', 'a documentation'),
  range('224.0.0.0/4', 'a multicast'),
  range('255.255.255.255/32', 'a broadcast'),
  range('240.0.0.0/4', 'a reserved'),
];

/** IPv6 ranges that are not global (IANA IPv6 Special-Purpose Address Registry), most specific first. */
const IPV6: Named[] = [
  range('::/128', 'an unspecified'),
  range('::1/128', 'a loopback'),
  range('::ffff:0:0/96', 'an IPv4-mapped', 12),
  range('::ffff:0:0:0/96', 'an IPv4-translated'),
  range('::/96', 'a deprecated IPv4-compatible'),
  range('64:ff9b::/96', 'a NAT64', 12),
  range('64:ff9b:1::/48', 'a local-use NAT64'),
  range('100::/64', 'a discard-only'),
  range('2001::/32', 'a Teredo'),
  range('2001:db8::/32', 'a documentation'),
  range('2001::/23', 'an IETF protocol assignment'),
  range('2002::/16', 'a 6to4', 2),
  range('3fff::/20', 'a documentation'),
  range('5f00::/16', 'an SRv6 segment identifier'),
  range('fc00::/7', 'a unique-local'),
  range('fe80::/10', 'a link-local'),
  range('fec0::/10', 'a deprecated site-local'),
  range('ff00::/8', 'a multicast'),
];

/** Global unicast IPv6 (everything else is reserved or one of the ranges above). */
const GLOBAL_UNICAST_V6 = range('2000::/3', 'global unicast');

function describeIpv4(bytes: Uint8Array): string | null {
  const r = IPV4.find((x) => inRange(bytes, x));
  return r ? `${r.label} address (${r.cidr})` : null;
}

function describeIpv6(bytes: Uint8Array): string | null {
  const r = IPV6.find((x) => inRange(bytes, x));
  if (r?.embedsIpv4At !== undefined) {
    const v4 = bytes.subarray(r.embedsIpv4At, r.embedsIpv4At + 4);
    const inner = describeIpv4(v4);
    return inner === null ? null : `${r.label} address (${r.cidr}) of ${v4.join('.')}, ${inner}`;
  }
  if (r) return `${r.label} address (${r.cidr})`;
  if (!inRange(bytes, GLOBAL_UNICAST_V6)) return 'a reserved address (outside the global unicast 2000::/3)';
  return null;
}

/** Why an address is not public ("a loopback address (127.0.0.0/8)"), or null; text that is no IP is not public. */
export function nonPublicReason(address: string): string | null {
  const v4 = ipv4Bytes(address);
  if (v4) return describeIpv4(v4);
  const v6 = ipv6Bytes(address);
  if (v6) return describeIpv6(v6);
  return 'not an IP address';
}

/** Is this address private, loopback, link-local or otherwise not public (any spelling, embedded IPv4 included)? */
export function isNonPublicAddress(address: string): boolean {
  return nonPublicReason(address) !== null;
}

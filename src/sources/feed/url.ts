/** URLs of feed items: resolution against a base, and the canonical form used for exact deduplication. */

function httpUrl(u: URL): boolean {
  return u.protocol === 'http:' || u.protocol === 'https:';
}

/** `ref` resolved against `base` (itself possibly relative to nothing); an absolute http(s) URL or null. */
export function resolveHttpUrl(ref: string | null | undefined, base: string | null | undefined): string | null {
  if (ref == null) return null;
  const r = ref.trim();
  if (r === '') return null;
  let u: URL;
  try {
    u = base ? new URL(r, base) : new URL(r);
  } catch {
    return null;
  }
  return httpUrl(u) ? u.href : null;
}

/** `ref` resolved against `base`, any scheme (for xml:base chains); null when it cannot be. */
export function resolveBase(ref: string | null | undefined, base: string | null): string | null {
  if (ref == null || ref.trim() === '') return base;
  try {
    return (base ? new URL(ref.trim(), base) : new URL(ref.trim())).href;
  } catch {
    return base;
  }
}

/**
 * Query parameters that only track the reader (campaigns, click ids, mail tools, analytics); matched
 * case-insensitively on the decoded name. `utm_*` is matched as a prefix.
 */
const TRACKING = new Set([
  'fbclid', 'gclid', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'msclkid', 'yclid', 'twclid', 'ttclid', 'li_fat_id',
  'igshid', 'mc_cid', 'mc_eid', 'mkt_tok', '_ga', '_gl', '_hsenc', '_hsmi', '__hstc', '__hssc', '__hsfp',
  'hsctatracking', 'oly_anon_id', 'oly_enc_id', 'vero_id', 'vero_conv', 'wickedid', 'rb_clickid', 's_cid',
  'ncid', 'cmpid', 'sr_share', 'at_medium', 'at_campaign', 'guccounter', 'guce_referrer', 'guce_referrer_sig',
  'ito', 'smid', 'ocid', 'taid', 'cid_source', 'ns_mchannel', 'ns_source', 'ns_campaign', 'ns_linkname', 'ns_fee',
]);

function isTracking(rawName: string): boolean {
  let name: string;
  try {
    name = decodeURIComponent(rawName.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    name = rawName.toLowerCase();
  }
  return name.startsWith('utm_') || TRACKING.has(name);
}

/** Upper-case hex in percent escapes, so `%2f` and `%2F` compare equal. */
function upperEscapes(s: string): string {
  return s.replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase());
}

/**
 * Canonical form for exact dedup: lower-case scheme and host (and no trailing dot), default port dropped,
 * fragment dropped, tracking parameters removed, remaining parameters sorted (by their encoded text, so
 * nothing is re-encoded), percent escapes upper-cased; null for a URL that is not absolute http(s).
 */
export function canonicalUrl(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return null;
  }
  if (!httpUrl(u)) return null;
  if (u.hostname.endsWith('.')) u.hostname = u.hostname.replace(/\.+$/, '');
  u.hash = '';
  u.username = '';
  u.password = '';
  const query = u.search.slice(1);
  const kept = query === '' ? [] : query.split('&').filter((p) => p !== '' && !isTracking(p.split('=')[0]!));
  kept.sort();
  const search = kept.length ? `?${kept.map(upperEscapes).join('&')}` : '';
  return `${u.protocol}//${u.host}${upperEscapes(u.pathname)}${search}`;
}

/**
 * Every spelling of one page's address as one form, offline (rules: docs/sources.md, "Canonical links"). The scheme
 * is kept (`http` and `https` may be different sites), and so is `www.`.
 */

/**
 * Query parameters that only track the reader (campaigns, click ids, mail tools, analytics). `utm_*` is matched as a
 * prefix.
 */
const TRACKING_PARAMS: ReadonlySet<string> = new Set(
  `fbclid gclid gclsrc dclid gbraid wbraid msclkid yclid twclid ttclid li_fat_id igshid mc_cid mc_eid mkt_tok _ga _gl
  _hsenc _hsmi __hstc __hssc __hsfp hsctatracking oly_anon_id oly_enc_id vero_id vero_conv wickedid rb_clickid s_cid
  ncid cmpid cmp sr_share at_medium at_campaign guccounter guce_referrer guce_referrer_sig ito smid ocid taid
  cid_source ns_mchannel ns_source ns_campaign ns_linkname ns_fee ref_src ref_url spm xtor soc_src soc_trk share dicbo
  ftag cmpgn sref`.split(/\s+/),
);

/** Query parameters that switch a page to its AMP rendering (`outputType=amp`, `amp=1`, `amp`, `_amp=true`). */
const AMP_PARAMS: ReadonlySet<string> = new Set(['outputtype', 'amp', '_amp', 'amp_js_v', 'usqp']);

/**
 * Query parameters of redirectors that carry the target link (used only when the value is an absolute http(s) link).
 */
const REDIRECT_PARAMS: readonly string[] =
  'url u target dest destination redirect redirect_url redirecturl goto link to q'.split(' ');

/** Redirectors wrapping redirectors are unwrapped this many times at most. */
const REDIRECT_DEPTH = 3;

/** A query component decoded (`+` as a space); as written when it is no valid escape. */
const decodeValue = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
};

/** Parameter names compare decoded and in lower case. */
const decodeName = (raw: string): string => decodeValue(raw).toLowerCase();

/** Whether a query parameter only tracks the reader or asks for the AMP rendering: the page is the same without it. */
function isDroppedParam(rawName: string, rawValue: string): boolean {
  const name = decodeName(rawName);
  if (name.startsWith('utm_') || TRACKING_PARAMS.has(name)) return true;
  if (name === 'outputtype') return decodeName(rawValue) === 'amp';
  return AMP_PARAMS.has(name);
}

const ABSOLUTE_HTTP = /^https?:\/\/[^\s/?#]+/i;

/** The target a redirector link carries, or undefined when `link` is no such redirector. */
export function redirectTarget(link: string): string | undefined {
  // `…/*https://www.example/…`: everything after the `*` (the publisher's redirector).
  const star = /\/\*(https?(?::|%3A)(?:\/\/|%2F%2F))/i.exec(link);
  if (star) {
    const rest = link.slice(star.index + 2);
    const target = /^https?:\/\//i.test(rest) ? rest : decodeValue(rest);
    if (ABSOLUTE_HTTP.test(target)) return target;
  }
  const q = link.indexOf('?');
  if (q < 0) return undefined;
  const query = link.slice(q + 1).split('#')[0]!;
  const params = new Map<string, string>();
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = decodeName(part.slice(0, eq));
    if (!params.has(name)) params.set(name, decodeValue(part.slice(eq + 1)));
  }
  for (const name of REDIRECT_PARAMS) {
    const value = params.get(name)?.trim();
    if (value !== undefined && ABSOLUTE_HTTP.test(value)) return value;
  }
  return undefined;
}

/** Upper-case hex in percent escapes, so `%2f` and `%2F` compare equal. */
function upperEscapes(s: string): string {
  return s.replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase());
}

function ampFreePath(path: string): string {
  // `/story.amp.html` -> `/story.html`, `/story.amp` -> `/story`.
  const segments = path
    .replace(/\.amp(\.html?)$/i, '$1')
    .replace(/\.amp$/i, '')
    .split('/');
  // ['', 'amp', …] or [… , 'amp'] or [… , 'amp', ''] (a trailing slash).
  if (segments.length > 2 && segments[1]!.toLowerCase() === 'amp') segments.splice(1, 1);
  while (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  if (segments.length > 1 && segments[segments.length - 1]!.toLowerCase() === 'amp') segments.pop();
  const out = segments.join('/');
  return out === '' ? '/' : out;
}

/** The canonical form of a link, or null for anything that is not an absolute http(s) link. */
export function canonicalLink(link: string): string | null {
  let current = link.trim();
  for (let i = 0; i < REDIRECT_DEPTH; i++) {
    const target = redirectTarget(current);
    if (target === undefined) break;
    current = target.trim();
  }
  let u: URL;
  try {
    u = new URL(current);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  let host = u.hostname.replace(/\.+$/, '');
  if (host.startsWith('amp.') && host.indexOf('.', 4) > 0) host = host.slice(4);
  const port = u.port === '' ? '' : `:${u.port}`;
  const kept = u.search
    .slice(1)
    .split('&')
    .filter((p) => {
      if (p === '') return false;
      const eq = p.indexOf('=');
      return eq < 0 ? !isDroppedParam(p, '') : !isDroppedParam(p.slice(0, eq), p.slice(eq + 1));
    })
    .sort();
  const search = kept.length ? `?${kept.map(upperEscapes).join('&')}` : '';
  return `${u.protocol}//${host}${port}${upperEscapes(ampFreePath(u.pathname))}${search}`;
}

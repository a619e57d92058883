/**
 * Feed text to plain text: HTML tags removed (script/style/comments with their content), character
 * references decoded (numeric, and the HTML 4 named set that real feeds use), control characters
 * dropped, whitespace collapsed. A hand-rolled scanner (linear in the input, no regex backtracking).
 */

// Latin-1 supplement, U+00A0..U+00FF, in code point order (HTML 4 names).
const LATIN1 = (
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 ' +
  'acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml ' +
  'Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde ' +
  'Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ' +
  'ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide ' +
  'oslash ugrave uacute ucirc uuml yacute thorn yuml'
).split(' ');

// Greek letters, U+0391.. and U+03B1.. (HTML 4 names; U+03A2 is unassigned, final sigma is lower case).
const GREEK_UPPER = 'Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota Kappa Lambda Mu Nu Xi Omicron Pi Rho _ Sigma Tau Upsilon Phi Chi Psi Omega'.split(' ');

const OTHER: Record<string, number> = {
  quot: 0x22, amp: 0x26, apos: 0x27, lt: 0x3c, gt: 0x3e,
  OElig: 0x152, oelig: 0x153, Scaron: 0x160, scaron: 0x161, Yuml: 0x178, fnof: 0x192, circ: 0x2c6, tilde: 0x2dc,
  thetasym: 0x3d1, upsih: 0x3d2, piv: 0x3d6, sigmaf: 0x3c2,
  ensp: 0x2002, emsp: 0x2003, thinsp: 0x2009, zwnj: 0x200c, zwj: 0x200d, lrm: 0x200e, rlm: 0x200f,
  ndash: 0x2013, mdash: 0x2014, lsquo: 0x2018, rsquo: 0x2019, sbquo: 0x201a, ldquo: 0x201c, rdquo: 0x201d,
  bdquo: 0x201e, dagger: 0x2020, Dagger: 0x2021, bull: 0x2022, hellip: 0x2026, permil: 0x2030, prime: 0x2032,
  Prime: 0x2033, lsaquo: 0x2039, rsaquo: 0x203a, oline: 0x203e, frasl: 0x2044, euro: 0x20ac, image: 0x2111,
  weierp: 0x2118, real: 0x211c, trade: 0x2122, alefsym: 0x2135, larr: 0x2190, uarr: 0x2191, rarr: 0x2192,
  darr: 0x2193, harr: 0x2194, crarr: 0x21b5, lArr: 0x21d0, uArr: 0x21d1, rArr: 0x21d2, dArr: 0x21d3,
  hArr: 0x21d4, forall: 0x2200, part: 0x2202, exist: 0x2203, empty: 0x2205, nabla: 0x2207, isin: 0x2208,
  notin: 0x2209, ni: 0x220b, prod: 0x220f, sum: 0x2211, minus: 0x2212, lowast: 0x2217, radic: 0x221a,
  prop: 0x221d, infin: 0x221e, ang: 0x2220, and: 0x2227, or: 0x2228, cap: 0x2229, cup: 0x222a, int: 0x222b,
  there4: 0x2234, sim: 0x223c, cong: 0x2245, asymp: 0x2248, ne: 0x2260, equiv: 0x2261, le: 0x2264, ge: 0x2265,
  sub: 0x2282, sup: 0x2283, nsub: 0x2284, sube: 0x2286, supe: 0x2287, oplus: 0x2295, otimes: 0x2297,
  perp: 0x22a5, sdot: 0x22c5, lceil: 0x2308, rceil: 0x2309, lfloor: 0x230a, rfloor: 0x230b, lang: 0x2329,
  rang: 0x232a, loz: 0x25ca, spades: 0x2660, clubs: 0x2663, hearts: 0x2665, diams: 0x2666,
};

const NAMED: Map<string, string> = (() => {
  const m = new Map<string, string>();
  LATIN1.forEach((name, i) => m.set(name, String.fromCodePoint(0xa0 + i)));
  GREEK_UPPER.forEach((name, i) => {
    if (name === '_') return;
    m.set(name, String.fromCodePoint(0x391 + i));
    m.set(name.toLowerCase(), String.fromCodePoint(0x3b1 + i));
  });
  for (const [name, cp] of Object.entries(OTHER)) m.set(name, String.fromCodePoint(cp));
  return m;
})();

// HTML's reading of numeric references 0x80..0x9F as Windows-1252 (a common mistake in feeds).
const CP1252_C1: Record<number, number> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021, 0x88: 0x2c6,
  0x89: 0x2030, 0x8a: 0x160, 0x8b: 0x2039, 0x8c: 0x152, 0x8e: 0x17d, 0x91: 0x2018, 0x92: 0x2019, 0x93: 0x201c,
  0x94: 0x201d, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x2dc, 0x99: 0x2122, 0x9a: 0x161, 0x9b: 0x203a,
  0x9c: 0x153, 0x9e: 0x17e, 0x9f: 0x178,
};

function fromNumeric(cp: number): string {
  if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\uFFFD';
  const mapped = CP1252_C1[cp];
  return String.fromCodePoint(mapped ?? cp);
}

const REFERENCE = /&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,7})|([A-Za-z][A-Za-z0-9]{1,9}));?/g;

/** Decodes character references; unknown names and references without a `;` that are not numeric stay as written. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(REFERENCE, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (dec !== undefined) return fromNumeric(Number.parseInt(dec, 10));
    if (hex !== undefined) return fromNumeric(Number.parseInt(hex, 16));
    if (!whole.endsWith(';')) return whole;
    return NAMED.get(name!) ?? whole;
  });
}

const BLOCK = new Set([
  'p', 'br', 'div', 'li', 'ul', 'ol', 'tr', 'td', 'th', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'blockquote', 'pre', 'hr', 'section', 'article', 'header', 'footer', 'figure', 'figcaption', 'dd', 'dt',
]);
const SKIP_CONTENT = new Set(['script', 'style', 'noscript', 'template']);

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** End index (exclusive) of the tag starting at `<` at i, honouring quoted attribute values; -1 when unterminated. */
function tagEnd(s: string, i: number): number {
  let quote = 0;
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (quote) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) {
      quote = c;
    } else if (c === 62) {
      return j + 1;
    }
  }
  return -1;
}

/** Removes markup, keeping text; block-level tags become a space so words do not run together. */
export function stripTags(s: string): string {
  if (!s.includes('<')) return s;
  let out = '';
  let i = 0;
  let lower: string | null = null; // computed once, only when a script/style element needs its end found
  while (i < s.length) {
    const lt = s.indexOf('<', i);
    if (lt === -1) {
      out += s.slice(i);
      break;
    }
    out += s.slice(i, lt);
    if (s.startsWith('<!--', lt)) {
      const end = s.indexOf('-->', lt + 4);
      i = end === -1 ? s.length : end + 3;
      continue;
    }
    if (s.startsWith('<![CDATA[', lt)) {
      const end = s.indexOf(']]>', lt + 9);
      out += end === -1 ? s.slice(lt + 9) : s.slice(lt + 9, end);
      i = end === -1 ? s.length : end + 3;
      continue;
    }
    const next = s.charCodeAt(lt + 1);
    const closing = next === 47; // '/'
    const nameStart = closing ? lt + 2 : lt + 1;
    if (!(isAlpha(s.charCodeAt(nameStart)) || (!closing && (next === 33 || next === 63)))) {
      // A lone '<' (e.g. "5 < 6") is text.
      out += '<';
      i = lt + 1;
      continue;
    }
    const end = tagEnd(s, lt);
    if (end === -1) {
      out += s.slice(lt);
      break;
    }
    let nameEnd = nameStart;
    while (nameEnd < end && /[A-Za-z0-9:-]/.test(s[nameEnd]!)) nameEnd++;
    const name = s.slice(nameStart, nameEnd).toLowerCase().replace(/^.*:/, '');
    i = end;
    if (!closing && SKIP_CONTENT.has(name) && !s.slice(lt, end).endsWith('/>')) {
      lower ??= s.toLowerCase();
      const close = lower.indexOf(`</${name}`, end);
      const closeEnd = close === -1 ? -1 : tagEnd(s, close);
      i = closeEnd === -1 ? s.length : closeEnd;
      out += ' ';
      continue;
    }
    if (BLOCK.has(name)) out += ' ';
  }
  return out;
}

/** Control characters other than whitespace, and the Unicode non-characters U+FFFE/U+FFFF. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]/g;

/** Feed text (possibly HTML, possibly entity-encoded) to one line of plain text; null when nothing is left. */
export function toPlainText(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  const text = decodeEntities(stripTags(raw)).replace(CONTROL, '').replace(/\s+/gu, ' ').trim();
  return text === '' ? null : text;
}

/**
 * Invisible characters and compatibility forms do not make a second story: the headline is written
 * one way (src/dedup/normalize.ts `canonicalHeadline`) before any identity key is made, so a copy with soft
 * hyphens, zero-width characters, bidi controls, variation selectors, tags, full-width or mathematical letters
 * has the same near-duplicate keys and is the same story, through the store too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isNearDuplicate, nearDuplicateKeys, prepare } from '../../src/dedup/near.js';
import { canonicalHeadline } from '../../src/dedup/normalize.js';
import { toSourcedItem } from '../../src/sources/pipeline.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

const BASE = 'Nvidia to invest $5 billion in Intel, co-develop chips';
/** `ch` inside three words of BASE, as in the report (a soft hyphen in three words). */
const inThreeWords = (ch: string) =>
  BASE.replace('Nvidia', `Nvi${ch}dia`).replace('invest', `in${ch}vest`).replace('billion', `bil${ch}lion`);
const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

/** Written out by hand (not read from a Unicode property), one or more of each kind. */
const INVISIBLE: [number, string][] = [
  [0x00ad, 'soft hyphen'],
  [0x034f, 'combining grapheme joiner'],
  [0x061c, 'Arabic letter mark'],
  [0x115f, 'Hangul choseong filler'],
  [0x17b4, 'Khmer vowel inherent aq'],
  [0x180b, 'Mongolian free variation selector one'],
  [0x180e, 'Mongolian vowel separator'],
  [0x200b, 'zero-width space'],
  [0x200c, 'zero-width non-joiner'],
  [0x200d, 'zero-width joiner'],
  [0x200e, 'left-to-right mark'],
  [0x200f, 'right-to-left mark'],
  [0x202a, 'left-to-right embedding'],
  [0x202c, 'pop directional formatting'],
  [0x202e, 'right-to-left override'],
  [0x2060, 'word joiner'],
  [0x2061, 'function application'],
  [0x2063, 'invisible separator'],
  [0x2066, 'left-to-right isolate'],
  [0x2069, 'pop directional isolate'],
  [0x206f, 'nominal digit shapes'],
  [0x3164, 'Hangul filler'],
  [0xfe00, 'variation selector-1'],
  [0xfe0f, 'variation selector-16'],
  [0xfeff, 'zero-width no-break space (BOM)'],
  [0xffa0, 'half-width Hangul filler'],
  [0x1bca0, 'shorthand format letter overlap'],
  [0x1d173, 'musical symbol begin beam'],
  [0xe0001, 'language tag'],
  [0xe0041, 'tag latin capital letter A'],
  [0xe0100, 'variation selector-17'],
  [0x0000, 'NUL'],
  [0x0007, 'bell'],
  [0x007f, 'delete'],
  [0x009f, 'application program command'],
];

describe('invisible code points: removed before identity keys', () => {
  it.each(INVISIBLE)('%#: %s in three words is the same headline, the same keys and the same story', (cp) => {
    const copy = inThreeWords(String.fromCodePoint(cp));
    expect(copy).not.toBe(BASE);
    expect(canonicalHeadline(copy)).toBe(BASE);
    expect(nearDuplicateKeys(copy)).toEqual(nearDuplicateKeys(BASE));
    expect(isNearDuplicate(copy, BASE)).toBe(true);
  });

  it('the whole Default_Ignorable_Code_Point class, every code point of it', () => {
    const missed: string[] = [];
    let n = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      if (!/\p{Default_Ignorable_Code_Point}/u.test(ch)) continue;
      n++;
      if (canonicalHeadline(`Nvi${ch}dia`) !== 'Nvidia') missed.push(hex(cp));
    }
    expect(n).toBeGreaterThan(4000);
    expect(missed).toEqual([]);
  });
});

describe('whitespace forms: one space', () => {
  const SPACES: [number, string][] = [
    [0x0009, 'tab'],
    [0x000a, 'line feed'],
    [0x000d, 'carriage return'],
    [0x0085, 'next line'],
    [0x00a0, 'no-break space'],
    [0x1680, 'ogham space mark'],
    [0x2002, 'en space'],
    [0x2003, 'em space'],
    [0x2007, 'figure space'],
    [0x2009, 'thin space'],
    [0x200a, 'hair space'],
    [0x2028, 'line separator'],
    [0x2029, 'paragraph separator'],
    [0x202f, 'narrow no-break space'],
    [0x205f, 'medium mathematical space'],
    [0x3000, 'ideographic space'],
  ];
  it.each(SPACES)('%#: %s between words, alone or doubled, is a space', (cp) => {
    const s = String.fromCodePoint(cp);
    for (const copy of [BASE.replaceAll(' ', s), BASE.replaceAll(' ', `${s} ${s}`)]) {
      expect(canonicalHeadline(copy)).toBe(BASE);
      expect(nearDuplicateKeys(copy)).toEqual(nearDuplicateKeys(BASE));
    }
  });
});

describe('compatibility forms and spellings of one character: folded', () => {
  it.each([
    ['full-width letters and digits', 'Ｎｖｉｄｉａ to invest ＄５ billion in Intel, co-develop chips'],
    ['mathematical bold letters', '𝐍𝐯𝐢𝐝𝐢𝐚 to invest $5 billion in 𝐈𝐧𝐭𝐞𝐥, co-develop chips'],
    ['mathematical sans-serif and script letters', '𝖭𝗏𝗂𝖽𝗂𝖺 to 𝒾𝓃𝓋𝑒𝓈𝓉 $5 billion in Intel, co-develop chips'],
    ['a non-breaking hyphen', 'Nvidia to invest $5 billion in Intel, co\u2011develop chips'],
    ['a hyphen and a minus sign', 'Nvidia to invest $5 billion in Intel, co\u2010develop chips'],
    ['a trademark sign', 'Nvidia™ to invest $5 billion in Intel®, co-develop chips'],
    ['leading and trailing spaces', '  Nvidia to invest $5 billion in Intel, co-develop chips \u00a0'],
  ])('%s', (_kind, copy) => {
    expect(canonicalHeadline(copy)).toBe(BASE.replace('co\u2010', 'co-'));
    expect(nearDuplicateKeys(copy)).toEqual(nearDuplicateKeys(BASE));
    expect(isNearDuplicate(copy, BASE)).toBe(true);
  });
  it('a ligature, super- and subscript digits, circled digits, accents on Latin letters', () => {
    expect(canonicalHeadline('Nestlé ﬁrst-quarter proﬁt beats estimates')).toBe(
      'Nestle first-quarter profit beats estimates',
    );
    expect(canonicalHeadline('Q³ results: ①②% growth at Société Générale')).toBe(
      'Q3 results: 12% growth at Societe Generale',
    );
    expect(canonicalHeadline('H₂ demand rises at Siemens Energy')).toBe('H2 demand rises at Siemens Energy');
    expect(canonicalHeadline('Apple‘s chief’s `view` ʼfirmʼ')).toBe("Apple's chief's 'view' 'firm'");
  });
  it('keeps what a reader sees as different: other letters, scripts and visible marks stay', () => {
    expect(canonicalHeadline('Nvidia: 5% — Intel')).toBe('Nvidia: 5% — Intel');
    expect(canonicalHeadline('日本銀行が利上げ')).toBe('日本銀行が利上げ');
    expect(canonicalHeadline('Straße')).toBe('Straße');
    expect(prepare('Apple to buy Perplexity').tokens).not.toEqual(prepare('Apple to buy Perpl exity').tokens);
  });
  it('plain ASCII is returned as is, trimmed', () => {
    expect(canonicalHeadline(BASE)).toBe(BASE);
    expect(canonicalHeadline(` ${BASE}  `)).toBe(BASE);
  });
});

describe('store: an invisible-character copy is a duplicate, not a second article', () => {
  let store: SqliteStore | undefined;
  afterEach(() => store?.close());
  it.each([
    ['soft hyphen', '\u00ad'],
    ['zero-width space', '\u200b'],
    ['right-to-left override', '\u202e'],
    ['variation selector-16', '\ufe0f'],
  ])('%s in three words, from another wire: duplicate of the first', async (_name, ch) => {
    store = new SqliteStore(':memory:');
    const T0 = Date.parse('2026-03-02T12:00:00Z');
    const item = (source: string, id: string, content: string) =>
      toSourcedItem({ source, externalId: id, content, url: null, publishedAt: null, urgency: 'auto' });
    const [first] = await store.sources.ingestItems([item('wire-a', 'a-1', BASE)], T0);
    expect(first!.status).toBe('stored');
    // The rule could have answered `stored`: a different story from the other wire is stored.
    const [other] = await store.sources.ingestItems(
      [item('wire-b', 'b-0', 'Intel shares fall 5% after weak forecast')],
      T0 + 1000,
    );
    expect(other!.status).toBe('stored');
    const [copy] = await store.sources.ingestItems([item('wire-b', 'b-1', inThreeWords(ch))], T0 + 2000);
    expect(copy).toMatchObject({ status: 'duplicate', id: (first as { id: string }).id });
  });
});

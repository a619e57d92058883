/**
 * Candidate keys, at most 10 characters, deterministic: MinHash LSH bands over the content tokens, plus anchor keys
 * (a subject with a figure or an event) that find a rewording beyond the bands without a key per company.
 */
import { ALIAS_WORDS, PLACES, isFigureToken, numberToken, type Prepared } from './normalize.js';

/** 14 bands of 2 rows: a pair sharing half its content tokens shares a band with high probability. */
const BANDS = 14;
const ROWS = 2;

/** The 32-bit FNV-1a offset basis and prime. */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** The golden-ratio constant: spreads the seeds of the MinHash rows over 32 bits. */
const SEED_STEP = 0x9e3779b1;

/** 32-bit FNV-1a of a string. */
function fnv(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/** The MurmurHash3 finaliser: every input bit reaches every output bit (one hash function per seed). */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Tokens that carry no story on their own are left out of the MinHash keys (they still count in the decision). */
const GENERIC = new Set(
  `share rise fall market investor trader analyst report company group plan see expect quarter annual record high low
  first time above below`.split(/\s+/),
);

function minhashKeys(tokens: Iterable<string>): string[] {
  const hashes: number[] = [];
  for (const t of tokens) if (!GENERIC.has(t)) hashes.push(fnv(t));
  if (hashes.length === 0) return [];
  // One key per band; the band number in front keeps them distinct.
  const keys = new Array<string>(BANDS);
  for (let b = 0; b < BANDS; b++) {
    let band = FNV_OFFSET;
    for (let r = 0; r < ROWS; r++) {
      const seed = Math.imul(b * ROWS + r + 1, SEED_STEP);
      let min = 0xffffffff;
      for (let i = 0; i < hashes.length; i++) {
        const h = mix((hashes[i]! ^ seed) >>> 0);
        if (h < min) min = h;
      }
      band = Math.imul(band ^ min, FNV_PRIME) >>> 0;
    }
    keys[b] = b.toString(36) + band.toString(36);
  }
  return keys;
}

/** Symbols written bare (`NVDA`), lower case. */
const SYMBOLS = new Set([...ALIAS_WORDS.keys()].map((t) => t.toLowerCase()));

/** What a headline is about: its symbols, bare symbols, named entities (places aside) and its first content word. */
function subjects(p: Prepared): Set<string> {
  const out = new Set<string>();
  for (const t of p.tickers) out.add(`~${t.toLowerCase()}`);
  for (const c of p.caps) if (SYMBOLS.has(c)) out.add(`~${c}`);
  for (const e of p.entities) if (!PLACES.has(e) && e.length >= 3) out.add(e);
  for (const t of p.tokens) {
    if (isFigureToken(t) || GENERIC.has(t)) continue;
    out.add(t);
    break;
  }
  return out;
}

/** Figure keys: the exact figure and the figure to two significant digits (`10.6b` also as `11b`). */
function figures(p: Prepared): Set<string> {
  const out = new Set<string>();
  for (const v of p.numberValues) {
    out.add(numberToken(v));
    out.add(numberToken({ ...v, value: Number(v.value.toPrecision(2)) }));
  }
  return out;
}

/** The month and quarter a headline names (`g:month:july`, `g:quarter:q2`): a figure of time. */
function periods(p: Prepared): string[] {
  const out: string[] = [];
  for (const group of ['month', 'quarter']) for (const m of p.flags.get(group) ?? []) out.push(`g:${group}:${m}`);
  return out;
}

function anchorKeys(p: Prepared): string[] {
  const keys = new Set<string>();
  const subs = subjects(p);
  // A place is a subject too (`US GDP grows 3%` / `U.S. economy expands 3.0%`).
  for (const pl of p.places) subs.add(`@${pl}`);
  const figs = figures(p);
  for (const q of periods(p)) figs.add(q);
  const others = figs.size > 0 ? figs : p.events;
  for (const s of subs) for (const f of others) keys.add(`a${fnv(`${s}|${f}`).toString(36)}`);
  return [...keys];
}

export function candidateKeys(p: Prepared): string[] {
  return [...minhashKeys(p.tokens), ...anchorKeys(p)];
}

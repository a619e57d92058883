/**
 * A query that describes a company or instrument (`iphone maker`) reaches the articles naming it: per
 * descriptor found (descriptors.json, whole words, longest first), `keyword` gets the names appended and
 * `semantic` the name in its place. Pure.
 */
import saved from '../enrich/resources/descriptors.json' with { type: 'json' };
import { COMPANIES } from '../enrich/directory.js';

export interface ExpandedQuery {
  keyword: string;
  semantic: string;
  /** The descriptors found, with the name each stands for (for logs and tests). */
  found: { descriptor: string; name: string }[];
  /** Every name of what the descriptors stand for (`Alphabet`, `Google`…): an article naming one is about it. */
  names: string[];
}

interface Phrase {
  words: string[];
  name: string;
  /** Every short name of the company (`Alphabet`, `Google`), or the name alone for an institution or instrument. */
  expansion: string[];
}

/** Lower-case words; a hyphen separates words (`frankfurt-based`), a possessive stays on its word. */
const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[’]/g, "'")
    .match(/[\p{L}\p{N}&'.]+/gu)
    ?.map((w) => w.replace(/^[.']+|[.']+$/g, ''))
    .filter(Boolean) ?? [];

let index: Map<string, Phrase[]> | undefined;

/** Names of the directory by lower-case name → all that company's short names (legal names left out). */
function companyNames(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const names of COMPANIES.values()) {
    const list = names.split('|').map((n) => n.replace(/^\?/, ''));
    const short = list.filter(
      (n) => !/\b(?:inc|corp|corporation|plc|ltd|limited|ag|sa|se|nv|holdings?|group|co|company)\.?$/i.test(n),
    );
    for (const n of list) out.set(n.toLowerCase(), [...new Set(short.length ? short : [list[0]!])]);
  }
  return out;
}

function phrases(): Map<string, Phrase[]> {
  if (index) return index;
  const companies = companyNames();
  const built = new Map<string, Phrase[]>();
  for (const [name, descriptors] of Object.entries(saved.descriptors as Record<string, string[]>)) {
    const expansion = companies.get(name.toLowerCase()) ?? [name];
    for (const d of descriptors) {
      const w = words(d);
      if (w.length === 0) continue;
      const list = built.get(w[0]!) ?? [];
      list.push({ words: w, name, expansion });
      built.set(w[0]!, list);
    }
  }
  for (const list of built.values()) list.sort((a, b) => b.words.length - a.words.length);
  index = built;
  return built;
}

export function expandQuery(q: string): ExpandedQuery {
  const qw = words(q);
  const found: ExpandedQuery['found'] = [];
  const out: string[] = [];
  const added: string[] = [];
  for (let i = 0; i < qw.length; i++) {
    const hit = phrases()
      .get(qw[i]!)
      ?.find((p) => p.words.every((w, k) => qw[i + k] === w));
    if (!hit) {
      out.push(qw[i]!);
      continue;
    }
    found.push({ descriptor: hit.words.join(' '), name: hit.name });
    // `the japanese currency`: the article before a descriptor goes with it.
    if (out.at(-1) === 'the') out.pop();
    out.push(hit.name);
    for (const n of hit.expansion) if (!added.includes(n)) added.push(n);
    i += hit.words.length - 1;
  }
  if (found.length === 0) return { keyword: q, semantic: q, found, names: [] };
  return { keyword: `${q} ${added.join(' ')}`, semantic: out.join(' '), found, names: added };
}

/** The ranked items, those naming what the query described first (a look-alike comes after), each group in order. */
export function namedFirst<T>(
  ranked: readonly T[],
  contentOf: (item: T) => string | undefined,
  names: readonly string[],
): T[] {
  if (names.length === 0) return [...ranked];
  const pattern = new RegExp(
    `(?<![\\p{L}\\p{N}])(?:${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![\\p{L}\\p{N}])`,
    'iu',
  );
  const named: T[] = [];
  const other: T[] = [];
  for (const r of ranked) (pattern.test(contentOf(r) ?? '') ? named : other).push(r);
  return [...named, ...other];
}

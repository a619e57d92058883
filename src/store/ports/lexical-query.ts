/**
 * The keyword half of hybrid search: a query's words as a keyword query for SQLite FTS5 `MATCH` and PostgreSQL
 * `to_tsquery`. Terms are distinct lower-cased word tokens without stop-words (the split of
 * scripts/lib/evaluate-search.ts), at most {@link MAX_LEXICAL_TERMS}; each is quoted, so no character of `q` is
 * ever read as query syntax: any `q` the contract allows is answered, never a syntax error.
 */

/** Lower-case word tokens: runs of letters or digits ("OPEC+ output" → ["opec", "output"]). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Terms kept from one query: ranking cost grows with each. */
export const MAX_LEXICAL_TERMS = 32;

/** Common English function words: matched by most articles, so they carry no signal for ranking. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers him his how i ' +
    'if in into is it its itself just me more most my no nor not now of off on once only or other our ours out over own ' +
    'same she should so some such than that the their theirs them then there these they this those through to too under ' +
    'until up very was we were what when where which while who whom why will with would you your yours'
  ).split(' '),
);

/** The distinct, non-stop-word terms of `q`, in order (empty: nothing for the keyword index to match). */
export function lexicalTerms(q: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const t of tokenize(q)) {
    if (STOP_WORDS.has(t) || seen.has(t)) continue;
    seen.add(t);
    out.push(t);
    if (out.length === MAX_LEXICAL_TERMS) break;
  }
  return out;
}

/** A term in more articles is left to the semantic half: its idf is low, and ranking all its matches is what costs. */
export const MAX_TERM_ARTICLES = 10_000;
/** Most matches (the sum of the kept terms' article counts) one keyword query ranks. */
export const MAX_LEXICAL_POSTINGS = 40_000;

/** Rarest terms first within MAX_LEXICAL_POSTINGS; terms in no article or too common are dropped; query order kept. */
export function affordableTerms(terms: readonly string[], articles: readonly number[]): string[] {
  const order = terms.map((t, i) => ({ t, i, n: articles[i] ?? 0 })).filter((x) => x.n > 0 && x.n <= MAX_TERM_ARTICLES);
  order.sort((a, b) => a.n - b.n);
  const kept = new Set<number>();
  let sum = 0;
  for (const x of order) {
    if (sum + x.n > MAX_LEXICAL_POSTINGS) break;
    sum += x.n;
    kept.add(x.i);
  }
  return terms.filter((_, i) => kept.has(i));
}

/** FTS5 MATCH text: every term a quoted string (`"` doubled), any one of them matching (OR); bm25 ranks. */
export function fts5Query(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
}

/** PostgreSQL to_tsquery text: every term a quoted lexeme (`'` and `\` escaped), any one matching (`|`). */
export function tsQuery(terms: readonly string[]): string {
  return terms.map((t) => `'${t.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`).join(' | ');
}

/**
 * Checks the US entries of the company directory (src/enrich/directory.ts) against the SEC's public list
 * of registrants and their symbols (read from ../shared/reference/, never copied into the repository):
 * each US symbol is listed, and one of its names agrees with the SEC's legal name, or the difference is
 * explained in scripts/directory-explained.json (a later rename, a listing the SEC files under its parent).
 *
 *   npm run check:directory                       # exit 1 on an unexplained difference
 *   npm run check:directory -- --reference=<file> # another copy of sec-company-tickers-exchange.json
 *
 * Exit 2 when the reference file is absent: the check could not run (it says where it looked).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMPANIES, DIRECTORY_FILES } from '../src/enrich/directory.js';
import { findTickers } from '../src/enrich/tickers.js';

const DEFAULT_REFERENCE = fileURLToPath(
  new URL('../../shared/reference/sec-company-tickers-exchange.json', import.meta.url),
);
const EXPLAINED_FILE = new URL('./directory-explained.json', import.meta.url);

/** Home-market suffixes of non-US listings; a one-letter suffix outside them is a US share class (`BRK.B`). */
const MARKETS = new Set([
  'L',
  'DE',
  'PA',
  'AS',
  'MC',
  'MI',
  'SW',
  'ST',
  'HE',
  'CO',
  'OL',
  'BR',
  'LS',
  'VI',
  'IR',
  'WA',
  'TO',
  'AX',
  'T',
  'HK',
  'KS',
  'NS',
  'SA',
]);
/** Symbols that are not companies (crypto pairs, index and currency symbols). */
const NOT_A_COMPANY = /-USD$|^\^|=X$/;

export function isUsListing(symbol: string): boolean {
  if (NOT_A_COMPANY.test(symbol)) return false;
  const dot = symbol.lastIndexOf('.');
  return dot < 0 || !MARKETS.has(symbol.slice(dot + 1));
}

const SUFFIXES = new Set([
  'inc',
  'incorporated',
  'corp',
  'corporation',
  'co',
  'company',
  'companies',
  'ltd',
  'limited',
  'plc',
  'holdings',
  'holding',
  'group',
  'the',
  'sa',
  'nv',
  'ag',
  'se',
  'lp',
  'llc',
  'trust',
  'de',
  'md',
  'new',
  'class',
  'a',
  'b',
  'com',
]);

/** A name reduced to its distinctive words: lower case, `&` as `and`, no punctuation or corporate suffixes. */
export function nameWords(name: string, joinInitials = false): string[] {
  const lower = name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\/[a-z]{2}\/?/g, ' ')
    .replace(/&/g, ' and ');
  // `F.N.B.` is one word to the SEC (`FNB CORP`), `W.R.` two (`BERKLEY W R CORP`): both readings are tried.
  return (joinInitials ? lower.replace(/\b(?:[a-z]\.){2,}/g, (m) => m.replace(/\./g, '')) : lower)
    .replace(/[^a-z0-9 ]+/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== '' && !SUFFIXES.has(w));
}

/** Do two names name the same company: equal, one the start of the other, or most words shared? */
export function namesAgree(ours: string, theirs: string): boolean {
  return [false, true].some((join) => wordsAgree(nameWords(ours, join), nameWords(theirs)));
}

function wordsAgree(a: string[], b: string[]): boolean {
  if (a.length === 0 || b.length === 0) return false;
  const as = a.join(' ');
  const bs = b.join(' ');
  if (as === bs || bs.startsWith(`${as} `) || as.startsWith(`${bs} `) || as.replace(/ /g, '') === bs.replace(/ /g, ''))
    return true;
  const shared = a.filter((w) => b.includes(w)).length;
  return shared / Math.min(a.length, b.length) >= 0.6;
}

/**
 * A headline naming the company by one of our names and the next word of its SEC name (`Palantir Technologies`,
 * `Hormel Foods`) must find its symbol: a name followed by a company noun is read as another company's unless the
 * directory lists the longer name too. The problem, or undefined.
 */
export function longerNameProblem(symbol: string, ours: string[], theirs: string[]): string | undefined {
  for (const o of ours) {
    const mine = nameWords(o);
    for (const t of theirs) {
      const sec = nameWords(t);
      const next = sec[mine.length];
      if (mine.length === 0 || next === undefined || sec.slice(0, mine.length).join(' ') !== mine.join(' ')) continue;
      const written = `${o} ${next[0]!.toUpperCase()}${next.slice(1)}`;
      if (!findTickers(`${written} shares rose 3%`).includes(symbol))
        return `"${written}" (SEC "${t}") finds no symbol`;
    }
  }
  return undefined;
}

interface Finding {
  symbol: string;
  file: string;
  problem: string;
}

export function checkDirectory(
  reference: { fields: string[]; data: unknown[][] },
  explained: ReadonlyMap<string, string>,
): { checked: number; agree: number; explainedCount: number; findings: Finding[] } {
  const nameAt = reference.fields.indexOf('name');
  const tickerAt = reference.fields.indexOf('ticker');
  const sec = new Map<string, string[]>();
  for (const row of reference.data) {
    const t = String(row[tickerAt]);
    sec.set(t, [...(sec.get(t) ?? []), String(row[nameAt])]);
  }
  const fileOf = new Map<string, string>();
  for (const [file, companies] of DIRECTORY_FILES) for (const s of Object.keys(companies)) fileOf.set(s, file);
  let checked = 0;
  let agree = 0;
  let explainedCount = 0;
  const findings: Finding[] = [];
  for (const [symbol, names] of COMPANIES) {
    if (!isUsListing(symbol)) continue;
    checked++;
    const theirs = sec.get(symbol.replace(/\./g, '-'));
    const ours = names.split('|').map((n) => n.replace(/^\?/, ''));
    let problem: string | undefined;
    if (theirs === undefined) problem = 'symbol not in the SEC list';
    else if (!ours.some((o) => theirs.some((t) => namesAgree(o, t))))
      problem = `names differ: ours "${ours.join(' | ')}", SEC "${theirs.join(' | ')}"`;
    else
      problem = longerNameProblem(
        symbol,
        names.split('|').filter((n) => !n.startsWith('?')),
        theirs,
      );
    if (problem === undefined) agree++;
    else if (explained.has(symbol)) explainedCount++;
    else findings.push({ symbol, file: fileOf.get(symbol) ?? '?', problem });
  }
  return { checked, agree, explainedCount, findings };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const reference =
    process.argv.find((a) => a.startsWith('--reference='))?.slice('--reference='.length) ?? DEFAULT_REFERENCE;
  if (!existsSync(reference)) {
    console.error(
      `check:directory: the SEC reference list is not at ${reference}; nothing was checked (give --reference=<path to sec-company-tickers-exchange.json>)`,
    );
    process.exit(2);
  }
  const explained = new Map(
    Object.entries(JSON.parse(readFileSync(EXPLAINED_FILE, 'utf8')) as Record<string, string>).filter(
      ([k]) => !k.startsWith('_'),
    ),
  );
  const r = checkDirectory(
    JSON.parse(readFileSync(reference, 'utf8')) as { fields: string[]; data: unknown[][] },
    explained,
  );
  for (const f of r.findings) console.log(`  ${f.symbol.padEnd(8)} ${f.file}: ${f.problem}`);
  console.log(
    `check:directory: ${r.checked} US entries: ${r.agree} agree with the SEC list, ${r.explainedCount} differ as explained, ${r.findings.length} differ unexplained`,
  );
  process.exit(r.findings.length === 0 ? 0 : 1);
}

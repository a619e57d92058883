/**
 * What article identity costs per item, measured against a baseline in the same run:
 *
 *   npx tsx scripts/bench-identity.ts [--items=4000] [--rounds=3]
 *
 * 1. CPU per item: the identity step (the canonical link of the item, which is also the article's url; the repeat key)
 *    against what every item already cost before it (enrichment and near-duplicate keys).
 * 2. Store per item: `ingestItems` of fresh distinct items on a temporary SQLite file, with repeat keys
 *    (one more seen record written and looked up per item) against the same items without them.
 * Best of `rounds` each; ratios are identity / baseline. Run it on a quiet machine for absolute figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nearDuplicateKeys } from '../src/dedup/near.js';
import { enrich } from '../src/enrich/index.js';
import { identify } from '../src/ingest/identity.js';
import { repeatKey } from '../src/dedup/repeat.js';
import { canonicalLink } from '../src/dedup/link.js';
import type { SourcedItem } from '../src/store/ports/index.js';
import { SqliteStore } from '../src/store/sqlite/index.js';

const arg = (name: string, dflt: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : dflt;
};
const ITEMS = arg('items', 4000);
const ROUNDS = arg('rounds', 3);

// Distinct headlines and links (a fixed-seed generator), as a feed would carry them.
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const WORDS = [
  'shares',
  'rise',
  'fall',
  'after',
  'record',
  'quarter',
  'profit',
  'guidance',
  'deal',
  'probe',
  'rates',
  'bank',
  'chip',
  'oil',
  'gold',
  'bond',
  'yield',
  'merger',
  'layoffs',
  'forecast',
  'dividend',
  'buyback',
  'tariff',
  'inflation',
];
const COMPANIES = ['Apple', 'Nvidia', 'Tesla', 'JPMorgan', 'Boeing', 'Pfizer', 'Exxon', 'Walmart', 'Intel', 'Netflix'];
const make = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 8 }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
    const content = `${COMPANIES[i % COMPANIES.length]} ${words} ${tag}${i}`;
    const url = `https://www.example.com/markets/2026/11/21/${tag}-story-${i}/?utm_source=rss&utm_medium=feed#top`;
    return { content, url, published_at: new Date(Date.parse('2026-11-21T10:00:00Z') + i * 1000).toISOString() };
  });

function perItem(fn: () => void, n: number): number {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    fn();
    best = Math.min(best, ((performance.now() - t) * 1000) / n);
  }
  return best;
}

const rows = make(ITEMS, 'cpu');
const baseline = perItem(() => {
  for (const r of rows) {
    enrich(r.content);
    nearDuplicateKeys(r.content);
  }
}, ITEMS);
const identity = perItem(() => {
  for (const r of rows) {
    // The feed item's canonical link (its external id falls back to it; the article's url reuses it).
    canonicalLink(r.url);
    repeatKey(r.content, r.published_at);
  }
}, ITEMS);

async function storeRun(withRepeat: boolean, round: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'fns-bench-identity-'));
  const store = new SqliteStore(join(dir, 'fns.sqlite'));
  try {
    const items: SourcedItem[] = make(ITEMS, `s${round}${withRepeat ? 'r' : 'n'}`).map((r, i) => {
      const item = identify('wire', `g-${i}`, {
        content: r.content,
        urgency: 'regular',
        sentiment: null,
        tickers: [],
        published_at: r.published_at,
        url: r.url,
      });
      return withRepeat ? item : { ...item, repeatKey: null };
    });
    const t = performance.now();
    for (let i = 0; i < items.length; i += 200) await store.sources.ingestItems(items.slice(i, i + 200), Date.now);
    return ((performance.now() - t) * 1000) / ITEMS;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

let storeBase = Infinity;
let storeIdentity = Infinity;
for (let r = 0; r < ROUNDS; r++) {
  storeBase = Math.min(storeBase, await storeRun(false, r));
  storeIdentity = Math.min(storeIdentity, await storeRun(true, r));
}

const f = (us: number) => `${us.toFixed(1)} us`;
console.log(`article identity, ${ITEMS} distinct items, best of ${ROUNDS} (microseconds per item)`);
console.log(
  `1. CPU: enrichment + near keys (baseline) ${f(baseline)}; identity step (canonical link + repeat key) ${f(identity)}: ${(identity / baseline).toFixed(3)} x baseline`,
);
console.log(
  `2. store: ingestItems in batches of 200 without repeat keys (baseline) ${f(storeBase)}; with repeat keys ${f(storeIdentity)}: ${(storeIdentity / storeBase).toFixed(3)} x baseline (+${f(storeIdentity - storeBase)})`,
);
console.log(`identity in all: about ${f(identity + Math.max(0, storeIdentity - storeBase))} per item`);

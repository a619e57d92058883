/**
 * Enrichment and near-duplicate quality on the labelled sets in eval/ (dev: tuned on; test: held out).
 *
 *   npm run eval:enrich            # add --errors to list every miss
 *
 * Prints ticker precision/recall, per-ticker sentiment accuracy vs the majority class, article label
 * accuracy vs the majority class, and near-duplicate precision/recall of each method tried (thresholds
 * chosen on dev) and of the chosen one (src/dedup/near.ts), each on dev and test, goal next to measured.
 */
import { readFileSync } from 'node:fs';
import {
  GOALS, METHODS, chosenJudge, keyRecall, methodJudge, parseJsonl, scoreLabels, scorePairs, scoreTickers, tuneOnDev,
  type PairCase, type SentimentCase, type TickerCase,
} from '../src/enrich/evaluate.js';
import { enrich } from '../src/enrich/index.js';
import { isNearDuplicate, nearDuplicateKeys, prepare } from '../src/dedup/near.js';

const read = <T>(name: string) => parseJsonl<T>(readFileSync(new URL(`../eval/${name}`, import.meta.url), 'utf8'));
const showErrors = process.argv.includes('--errors');
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const splits = ['dev', 'test'] as const;

const tickers = read<TickerCase>('tickers.jsonl');
const sentiment = read<SentimentCase>('sentiment.jsonl');
const pairs = read<PairCase>('near-duplicates.jsonl');

console.log(`Sets: tickers ${tickers.length} headlines, sentiment ${sentiment.length} headlines, near-duplicates ${pairs.length} pairs (${pairs.filter((p) => p.duplicate).length} duplicates)`);
console.log('\nTickers (eval/tickers.jsonl)');
for (const s of splits) {
  const r = scoreTickers(tickers, s);
  console.log(`  ${s.padEnd(4)} precision ${pct(r.precision)} (goal >= ${pct(GOALS.tickerPrecision)})  recall ${pct(r.recall)} (goal >= ${pct(GOALS.tickerRecall)})  [${r.correct}/${r.found} found, ${r.expected} expected]`);
  console.log(`       per-ticker sentiment accuracy ${pct(r.sentimentAccuracy)} vs majority-class baseline ${pct(r.sentimentBaseline)} (goal: above baseline)`);
  if (showErrors) for (const e of r.errors) console.log(`         ${e}`);
}
console.log('\nArticle label (eval/sentiment.jsonl)');
for (const s of splits) {
  const r = scoreLabels(sentiment, s);
  console.log(`  ${s.padEnd(4)} accuracy ${pct(r.accuracy)} vs majority-class baseline ${pct(r.baseline)} ("${r.baselineLabel}") (goal: above baseline)  [n=${r.n}]`);
  if (showErrors) for (const e of r.errors) console.log(`         ${e}`);
}
const count = (s: string, d: boolean) => pairs.filter((p) => p.split === s && p.duplicate === d).length;
console.log(`\nNear-duplicates (eval/near-duplicates.jsonl: dev ${count('dev', true)}+${count('dev', false)}, test ${count('test', true)}+${count('test', false)} duplicates+others); thresholds chosen on dev`);
for (const m of METHODS) {
  const t = tuneOnDev(pairs, m, GOALS.dedupPrecision);
  const cells = splits.map((s) => {
    const r = scorePairs(pairs, s, methodJudge(m, t));
    return `${s} P ${pct(r.precision)} R ${pct(r.recall)}`;
  });
  console.log(`  ${m.name.padEnd(30)} threshold ${String(t).padEnd(5)} ${cells.join('   ')}`);
}
for (const s of splits) {
  const r = scorePairs(pairs, s, chosenJudge);
  console.log(`  chosen (isNearDuplicate) ${s.padEnd(4)} precision ${pct(r.precision)} (goal >= ${pct(GOALS.dedupPrecision)})  recall ${pct(r.recall)} (goal >= ${pct(GOALS.dedupRecall)})  [tp ${r.tp}, fp ${r.fp}, fn ${r.fn}]`);
  if (showErrors) for (const e of r.errors) console.log(`         ${e}`);
}
for (const s of splits) {
  const k = keyRecall(pairs, s);
  console.log(`  LSH keys ${s.padEnd(4)} duplicates sharing a key ${pct(k.duplicates)}, other pairs sharing a key ${pct(k.others)}, ${k.keysPerHeadline.toFixed(1)} keys per headline`);
}

// Cost (one core, this run; bench:ingest measures the whole path).
const rate = (f: (round: number) => number) => {
  const t0 = performance.now();
  let n = 0;
  let round = 0;
  while (performance.now() - t0 < 1000) n += f(round++);
  return Math.round(n / ((performance.now() - t0) / 1000));
};
const fmt = (x: number) => x.toLocaleString('en-US');
const texts = [...tickers.map((t) => t.text), ...sentiment.map((s) => s.text)];
console.log(`\nenrich(): ${fmt(rate(() => (texts.forEach((t) => enrich(t)), texts.length)))} headlines/s on one core`);
const heads = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
// A different suffix each round so the memo of near.ts never answers (a cold headline each time).
const tag = (n: number) => {
  let s = '';
  for (let x = n + 1; x > 0; x = Math.floor(x / 26)) s += String.fromCharCode(97 + (x % 26));
  return s;
};
const fresh = (round: number) => heads.map((h) => `${h} zq${tag(round)}`);
const keysRate = rate((r) => (fresh(r).forEach((h) => nearDuplicateKeys(h)), heads.length));
const pairRate = rate((r) => {
  const hs = fresh(r);
  for (let i = 0; i + 1 < hs.length; i += 2) isNearDuplicate(hs[i]!, hs[i + 1]!);
  return hs.length;
});
const prepared = heads.map(prepare);
const preparedRate = rate(() => {
  for (let i = 0; i + 1 < prepared.length; i += 2) isNearDuplicate(prepared[i]!, prepared[i + 1]!);
  return prepared.length >> 1;
});
const goal = 15_000;
console.log(`nearDuplicateKeys(text), cold: ${fmt(keysRate)} headlines/s (goal >= ${fmt(goal)}, x${(keysRate / goal).toFixed(2)})`);
console.log(`isNearDuplicate(text, text), both cold: ${fmt(pairRate)} headlines/s (goal >= ${fmt(goal)}, x${(pairRate / goal).toFixed(2)})`);
console.log(`isNearDuplicate(prepared, prepared): ${fmt(preparedRate)} pairs/s (texts seen before are prepared once, by the memo or by prepare())`);

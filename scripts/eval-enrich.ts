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
console.log('\nNear-duplicates (eval/near-duplicates.jsonl); thresholds chosen on dev');
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

// Cost of enrichment (not a goal here; bench:ingest measures the whole path).
const texts = [...tickers.map((t) => t.text), ...sentiment.map((s) => s.text)];
const t0 = performance.now();
let n = 0;
while (performance.now() - t0 < 1000) for (const t of texts) (enrich(t), n++);
console.log(`\nenrich(): ${Math.round(n / ((performance.now() - t0) / 1000)).toLocaleString('en-US')} headlines/s on one core`);

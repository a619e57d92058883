/**
 * Trains the sentiment models on the dev split of the team's corpus (eval/sentiment/) and writes
 * src/enrich/resources/sentiment-model.json with the corpus hash beside the weights. Deterministic and
 * offline: the same corpus gives the same file, byte for byte.
 *
 *   npm run train:sentiment              # train and write the model
 *   npm run train:sentiment -- --check   # fail when the committed model is not what the corpus gives
 *   npm run train:sentiment -- --tune    # cross-validate the settings and the class-weight power on dev (5 folds)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { articleMentions } from '../src/enrich/tickers.js';
import { modelInputs } from '../src/enrich/features.js';
import { bucketOf } from '../src/enrich/model.js';
import { ARTICLE_LABELS, TICKER_LABELS, corpusHash, readCorpus, type CorpusItem } from './lib/sentiment-corpus.js';
import { predictClass, quantise, train, trainNB, type Example, type TrainOptions } from './lib/train-linear.js';
import { score } from './lib/classification.js';

const MODEL_FILE = fileURLToPath(new URL('../src/enrich/resources/sentiment-model.json', import.meta.url));

/** The settings (chosen by `--tune` on dev folds). */
export const SETTINGS = {
  // 2^18: the dev corpus has about 145,000 distinct article features and 130,000 ticker ones; with fewer
  // buckets their collisions blur the naive-Bayes ratios (docs/sentiment.md gives the measurement).
  buckets: 1 << 18,
  article: { epochs: 6, rate: 0.1, l2: 3e-3, seed: 1, classWeightPower: 0.75, nbAlpha: 2 },
  ticker: { epochs: 12, rate: 0.1, l2: 3e-3, seed: 2, classWeightPower: 0.5, nbAlpha: 8 },
};

const toExample = (features: string[], y: number, buckets: number): Example => ({
  x: Int32Array.from(new Set(features.map((f) => bucketOf(f, buckets)))),
  y,
});

/** Article and per-ticker examples of some corpus items (a ticker the directory does not find gives none). */
export function examples(
  items: readonly CorpusItem[],
  buckets: number,
): { article: Example[]; ticker: Example[]; tickerMissed: number } {
  const article: Example[] = [];
  const ticker: Example[] = [];
  let tickerMissed = 0;
  for (const it of items) {
    const mentions = articleMentions(it.text);
    const inputs = modelInputs(it.text, mentions);
    article.push(toExample(inputs.article, ARTICLE_LABELS.indexOf(it.label), buckets));
    for (const [sym, label] of it.tickers) {
      const f = inputs.tickers.get(sym);
      if (!f) {
        tickerMissed++;
        continue;
      }
      ticker.push(toExample([...inputs.tickerShared, ...f], TICKER_LABELS.indexOf(label), buckets));
    }
  }
  return { article, ticker, tickerMissed };
}

/** Rare labels weigh more: each label by (n / (k × its count)) ^ power; 0.5 and 0.75 chosen on dev folds. */
function classWeights(ex: readonly Example[], k: number, power: number): number[] {
  const counts = new Array<number>(k).fill(0);
  for (const e of ex) counts[e.y]!++;
  const n = ex.length;
  return counts.map((c) => (c === 0 ? 1 : (n / (k * c)) ** power));
}

/** `nbAlpha`: naive-Bayes-scaled features (trainNB) with that smoothing; absent: plain logistic regression. */
type FitSettings = Omit<TrainOptions, 'buckets' | 'classes' | 'classWeight'> & {
  classWeightPower?: number;
  nbAlpha?: number;
};

function fit(ex: readonly Example[], k: number, o: FitSettings, buckets: number): Float64Array {
  const { classWeightPower = 0.5, nbAlpha, ...rest } = o;
  const opts = { ...rest, buckets, classes: k, classWeight: classWeights(ex, k, classWeightPower) };
  return nbAlpha === undefined
    ? train(ex, opts)
    : trainNB(ex, { ...opts, alpha: nbAlpha, biasBucket: bucketOf('bias', buckets) });
}

function buildModel(items: readonly CorpusItem[]): string {
  const dev = items.filter((i) => i.split === 'dev');
  const ex = examples(dev, SETTINGS.buckets);
  const a = fit(ex.article, ARTICLE_LABELS.length, SETTINGS.article, SETTINGS.buckets);
  const t = fit(ex.ticker, TICKER_LABELS.length, SETTINGS.ticker, SETTINGS.buckets);
  const model = {
    _format:
      'Written by npm run train:sentiment (scripts/train-sentiment.ts); never edit by hand. Weights: base64 int8, bucket-major, times scale per label; buckets by FNV-1a of the feature (src/enrich/model.ts).',
    corpus: corpusHash(),
    trainedOn: { articles: ex.article.length, tickers: ex.ticker.length },
    settings: SETTINGS,
    article: { labels: ARTICLE_LABELS, buckets: SETTINGS.buckets, ...quantise(a, ARTICLE_LABELS.length) },
    ticker: { labels: TICKER_LABELS, buckets: SETTINGS.buckets, ...quantise(t, TICKER_LABELS.length) },
  };
  return `${JSON.stringify(model, null, 1)}\n`;
}

/** 5-fold cross-validation on dev: the settings grid, then the class-weight power at the chosen settings. */
function tune(items: readonly CorpusItem[]): void {
  const dev = items.filter((i) => i.split === 'dev');
  const fold = (it: CorpusItem) => (it.text.length * 7 + it.text.charCodeAt(0)) % 5;
  const grid: FitSettings[] = [];
  for (const epochs of [6, 12, 20])
    for (const rate of [0.1, 0.2, 0.4]) for (const l2 of [1e-5, 1e-4, 1e-3]) grid.push({ epochs, rate, l2, seed: 1 });
  for (const which of ['article', 'ticker'] as const) {
    const k = which === 'article' ? ARTICLE_LABELS.length : TICKER_LABELS.length;
    const labels = which === 'article' ? ARTICLE_LABELS : TICKER_LABELS;
    const folds = [0, 1, 2, 3, 4].map((f) => {
      const held = dev.filter((it) => fold(it) === f);
      // Article examples are one per item, in order: their genre is the item's.
      return {
        train: examples(
          dev.filter((it) => fold(it) !== f),
          SETTINGS.buckets,
        )[which],
        held: examples(held, SETTINGS.buckets)[which],
        genres: held.map((it) => it.genre),
      };
    });
    const chosen = SETTINGS[which];
    const powers = [0.5, 0.75, 1].map((classWeightPower) => ({ ...chosen, classWeightPower }));
    for (const g of [
      ...grid.map((x) => ({ ...x, classWeightPower: chosen.classWeightPower, nbAlpha: chosen.nbAlpha })),
      ...powers,
    ]) {
      const pairs: { want: string; got: string }[] = [];
      const stance: { want: string; got: string }[] = [];
      for (const f of folds) {
        const w = fit(f.train, k, g, SETTINGS.buckets);
        f.held.forEach((e, i) => {
          const pair = { want: labels[e.y]!, got: labels[predictClass(w, k, e.x)]! };
          pairs.push(pair);
          if (which === 'article' && f.genres[i] === 'central-bank') stance.push(pair);
        });
      }
      const s = score(pairs, labels);
      const st = which === 'article' ? ` stance weighted F1 ${score(stance, labels).weightedF1.toFixed(3)}` : '';
      console.log(
        `${which} epochs ${g.epochs} rate ${g.rate} l2 ${g.l2} power ${g.classWeightPower}: accuracy ${s.accuracy.toFixed(3)} macro-F1 ${s.macroF1.toFixed(3)}${st}`,
      );
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = Date.now();
  const items = readCorpus();
  console.log(
    `corpus: ${items.length} items (${items.filter((i) => i.split === 'dev').length} dev, ${items.filter((i) => i.split === 'test').length} test), ${corpusHash()}`,
  );
  if (process.argv.includes('--tune')) tune(items);
  else {
    const text = buildModel(items);
    if (process.argv.includes('--check')) {
      let committed = '';
      try {
        committed = readFileSync(MODEL_FILE, 'utf8');
      } catch {
        // absent: differs
      }
      if (committed !== text) {
        console.error(
          'train:sentiment: src/enrich/resources/sentiment-model.json is not what the corpus gives (the corpus or the training changed); run npm run train:sentiment and commit the result',
        );
        process.exit(1);
      }
      console.log(
        `train:sentiment: the committed model matches the corpus (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
      );
    } else {
      writeFileSync(MODEL_FILE, text);
      console.log(
        `train:sentiment: wrote ${MODEL_FILE} (${(text.length / 1024).toFixed(0)} KiB) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
    }
  }
}

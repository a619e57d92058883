/**
 * The committed sentiment models (resources/sentiment-model.json, written by `npm run train:sentiment`)
 * applied to a text and its ticker mentions.
 */
import type { TickerSentimentLabel } from '../contract/index.js';
import saved from './resources/sentiment-model.json' with { type: 'json' };
import { modelInputs } from './features.js';
import { LinearModel } from './model.js';
import type { Mention } from './tickers.js';

export type ArticleLabel = 'positive' | 'negative' | 'neutral' | 'hawkish' | 'dovish';

const articleModel = new LinearModel<ArticleLabel>(saved.article);
const tickerModel = new LinearModel<TickerSentimentLabel>(saved.ticker);

export interface LearnedSentiment {
  article: ArticleLabel;
  tickers: Map<string, TickerSentimentLabel>;
}

/**
 * A stance needs monetary policy: a text that names a company and no central bank, policy maker or
 * policy rate (`Boeing will not meet its production target`) takes the best of the other labels.
 */
export function learnedSentiment(text: string, mentions: readonly Mention[]): LearnedSentiment {
  const inputs = modelInputs(text, mentions);
  const tickers = new Map<string, TickerSentimentLabel>();
  const shared = inputs.tickers.size > 0 ? tickerModel.scores(inputs.tickerShared) : undefined;
  for (const [sym, own] of inputs.tickers) tickers.set(sym, tickerModel.predict(own, undefined, shared));
  shareListLabels(text, mentions, tickers);
  const stanceAllowed = mentions.length === 0 || inputs.policy;
  let article = articleModel.predict(inputs.article, stanceAllowed ? undefined : STANCES);
  if (article === 'neutral') article = comparisonLabel(inputs.article) ?? article;
  return { article, tickers };
}

const STANCES = new Set<ArticleLabel>(['hawkish', 'dovish']);

/** A figure against its comparison figure, for a quantity whose direction is known (`EBIT EUR 5.2 mn (4.1)`). */
const COMPARISONS = new Map<string, ArticleLabel>([
  ['cmp:good:up', 'positive'],
  ['cmp:bad:down', 'positive'],
  ['cmp:good:down', 'negative'],
  ['cmp:bad:up', 'negative'],
]);

/**
 * The rule for reported figures: a line the model calls neutral that compares a figure with an earlier one
 * takes the direction that comparison means for holders, when all its comparisons agree.
 */
function comparisonLabel(features: readonly string[]): ArticleLabel | undefined {
  const labels = new Set(features.map((f) => COMPARISONS.get(f)).filter((l) => l !== undefined));
  return labels.size === 1 ? [...labels][0] : undefined;
}

/**
 * A list of names shares what follows it (`Apple, Microsoft and Intel lead a tech rally`): every company of
 * a run joined only by commas, `and` or `&` takes the label of the run's last company, the one the verb
 * follows. A company named again elsewhere in the line keeps its own label.
 */
function shareListLabels(text: string, mentions: readonly Mention[], labels: Map<string, TickerSentimentLabel>): void {
  const count = new Map<string, number>();
  for (const m of mentions) count.set(m.ticker, (count.get(m.ticker) ?? 0) + 1);
  const sorted = mentions
    .filter((m) => count.get(m.ticker) === 1 && labels.has(m.ticker))
    .sort((a, b) => a.start - b.start);
  let run: Mention[] = [];
  const close = () => {
    const last = run.at(-1);
    if (run.length > 1 && last) for (const m of run) labels.set(m.ticker, labels.get(last.ticker)!);
    run = [];
  };
  for (const m of sorted) {
    const prev = run.at(-1);
    // A joint is a few characters (`, `, ` and `, ` & `): a longer gap is read no further.
    if (prev && (m.start - prev.end > 8 || !/^\s*(?:,|,?\s*and|&)\s*$/i.test(text.slice(prev.end, m.start)))) close();
    run.push(m);
  }
  close();
}

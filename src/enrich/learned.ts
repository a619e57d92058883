/** The committed sentiment models (resources/sentiment-model.json, by `npm run train:sentiment`) applied to a text. */
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

/** A text naming a company but no policy cue (`Boeing will not meet its target`) is never hawkish or dovish. */
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

/** A line the model calls neutral takes what its figure comparisons mean for holders, when they all agree. */
function comparisonLabel(features: readonly string[]): ArticleLabel | undefined {
  const labels = new Set(features.map((f) => COMPARISONS.get(f)).filter((l) => l !== undefined));
  return labels.size === 1 ? [...labels][0] : undefined;
}

/** A list (`Apple, Microsoft and Intel lead a rally`) takes its last company's label; one named twice keeps its own. */
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

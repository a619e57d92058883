/**
 * What the service derives when an ingested article leaves it out (DESIGN.md §3): urgency from the
 * headline's flags, tickers from cashtags and well-known company names, sentiment from a small finance
 * lexicon. Deliberately simple and predictable; sources that know better send the fields.
 */
import type { ArticleSentiment, TickerSentiment, TickerSentimentLabel, Urgency } from '../contract/index.js';

const COMPANIES: Record<string, string> = {
  apple: 'AAPL', microsoft: 'MSFT', nvidia: 'NVDA', amazon: 'AMZN', alphabet: 'GOOGL', google: 'GOOGL',
  meta: 'META', tesla: 'TSLA', netflix: 'NFLX', intel: 'INTC', amd: 'AMD', 'jpmorgan': 'JPM',
  'goldman sachs': 'GS', 'morgan stanley': 'MS', 'bank of america': 'BAC', citigroup: 'C', 'wells fargo': 'WFC',
  boeing: 'BA', exxon: 'XOM', chevron: 'CVX', pfizer: 'PFE', 'johnson & johnson': 'JNJ', walmart: 'WMT',
  disney: 'DIS', 'coca-cola': 'KO', pepsico: 'PEP', visa: 'V', mastercard: 'MA', oracle: 'ORCL',
  salesforce: 'CRM', adobe: 'ADBE', broadcom: 'AVGO', qualcomm: 'QCOM', uber: 'UBER', shell: 'SHEL',
  bitcoin: 'BTC-USD', ether: 'ETH-USD', ethereum: 'ETH-USD',
};

const LEXICON: { label: Exclude<ArticleSentiment, null>; words: RegExp }[] = [
  { label: 'hawkish', words: /\b(rate hikes?|hikes? rates?|raises? (interest |benchmark )?rates?|tightening|hawkish|higher for longer)\b/i },
  { label: 'dovish', words: /\b(rate cuts?|cuts? rates?|lowers? (interest |benchmark )?rates?|easing|dovish|stimulus)\b/i },
  { label: 'positive', words: /\b(beats?|surges?|soars?|jumps?|rall(y|ies)|record high|upgrades?|tops estimates|gains?|rises?)\b/i },
  { label: 'negative', words: /\b(miss(es)?|plunges?|slumps?|tumbles?|falls?|drops?|downgrades?|layoffs?|probe|lawsuit|bankrupt\w*|warns?)\b/i },
];

export function deriveUrgency(content: string): Urgency {
  if (/^\s*(\*+\s*)?breaking\b/i.test(content)) return 'breaking';
  if (/^\s*(\*+\s*)?flash\b/i.test(content) || /^\s*\*/.test(content)) return 'flash';
  return 'regular';
}

export function deriveSentiment(content: string): ArticleSentiment {
  for (const { label, words } of LEXICON) if (words.test(content)) return label;
  return null;
}

function tickerLabel(content: string): TickerSentimentLabel {
  const s = deriveSentiment(content);
  return s === 'positive' || s === 'negative' ? s : 'neutral';
}

export function deriveTickers(content: string): TickerSentiment[] {
  const found = new Set<string>();
  for (const m of content.matchAll(/\$([A-Z]{1,5}(?:\.[A-Z])?)\b/g)) found.add(m[1]!);
  const lower = content.toLowerCase();
  for (const [name, ticker] of Object.entries(COMPANIES)) {
    if (new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\&]/g, '\\$&')}\\b`).test(lower)) found.add(ticker);
  }
  const label = tickerLabel(content);
  return [...found].map((ticker) => ({ ticker, sentiment: label }));
}

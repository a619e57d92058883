/**
 * A company's own features (src/enrich/model.ts) read a window of `TICKER_WINDOW` tokens either side of its first
 * mention, so a line of thousands of names costs per company what a headline does; a short text is read whole.
 */
import { describe, expect, it } from 'vitest';
import { TICKER_WINDOW, tickerFeatures, tickerText, type RuleScores } from '../../src/enrich/model.js';
import { lexiconScores } from '../../src/enrich/sentiment.js';
import { articleMentions } from '../../src/enrich/tickers.js';

const RULES: RuleScores = { general: 0, hawk: 0, dove: 0, policy: false };
const letters = (i: number) =>
  [i % 26, Math.floor(i / 26) % 26, Math.floor(i / 676) % 26].map((k) => String.fromCharCode(65 + k)).join('');

/** `$AAA w0 $BAA w1 …`: the word after each name tells where a feature's word stands. */
function list(from: number, to: number): string {
  return Array.from({ length: to - from }, (_, k) => `$${letters(from + k)} w${from + k}`).join(' ');
}

/** The own features of the `i`-th name of `text`, with every other name as another company. */
function featuresOf(text: string, i: number): string[] {
  const mentions = articleMentions(text);
  const target = mentions.filter((m) => m.ticker === letters(i));
  expect(target).toHaveLength(1);
  return tickerFeatures(
    tickerText(text, RULES),
    target,
    mentions.filter((m) => m.ticker !== letters(i)),
    RULES,
  );
}

const wordsIn = (features: string[]) =>
  new Set(features.flatMap((f) => [...f.matchAll(/\bw(\d+)\b/g)].map((m) => Number(m[1]))));

describe('per-ticker features of a name in a list of 4,000 names', () => {
  const line = list(0, 4000);
  const at = 2000;

  it('hold the words within the window of the name, each of them, and no word further away', () => {
    // Name k is token 2k, its word token 2k + 1.
    const want = Array.from({ length: 4000 }, (_, k) => k).filter((k) => Math.abs(2 * k + 1 - 2 * at) <= TICKER_WINDOW);
    expect([...wordsIn(featuresOf(line, at))].sort((a, b) => a - b)).toEqual(want);
  });

  it('are those of the same name in a short stretch of the list around it', () => {
    expect(featuresOf(list(at - 100, at + 100), at)).toEqual(featuresOf(line, at));
  });
});

describe('a text within the window is read whole', () => {
  it('the first name of a line of TICKER_WINDOW + 1 tokens sees its last word; one token more is out of reach', () => {
    const line = `${list(0, TICKER_WINDOW / 2)} tail`;
    const read = featuresOf(line, 0);
    expect(wordsIn(read).size).toBe(TICKER_WINDOW / 2);
    expect(read).toContain('SR:tail');
    const longer = featuresOf(`${line} beyond`, 0);
    expect(longer).toContain('SR:tail');
    expect(longer.some((f) => f.includes('beyond'))).toBe(false);
  });
});

describe('the lexicon scores each mention with its own clause in a long list', () => {
  it('of 3,000 names, the one whose clause surges scores, the rest 0', () => {
    const names = Array.from({ length: 3000 }, (_, k) => ['Apple', 'Microsoft', 'Intel'][k % 3]!);
    names[1501] = 'Microsoft surges';
    const text = names.join(', ');
    const mentions = articleMentions(text);
    expect(mentions).toHaveLength(3000);
    const { clauses } = lexiconScores(text, mentions);
    const scored = mentions.filter((_, k) => clauses[k]!.general !== 0);
    expect(scored.map((m) => m.end)).toEqual([text.indexOf(' surges')]);
    expect(clauses[1501]!.general).toBeGreaterThan(0);
  });
});

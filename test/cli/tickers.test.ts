/** `fns tickers lookup`: what a line resolves to and why, without a store. */
import { afterAll, describe, expect, it } from 'vitest';
import { fnsWith, tempDataDir } from './support.js';

describe('fns tickers lookup: the tickers, the sentiment and every candidate with its rule', () => {
  const data = tempDataDir('fns-tickers-');
  afterAll(() => data.remove());
  const lookup = (...args: string[]) => fnsWith({ dataDir: data.dir }, 'tickers', 'lookup', ...args);

  it('keeps the names written as names and says which rule refused the others (--json)', async () => {
    const r = await lookup(
      'Citigroup upgrades AbbVie to buy as Apple pie sales rise and Greg Abbott speaks; $amzn',
      '--json',
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      tickers: { ticker: string; relevance: number; role: string }[];
      candidates: { text: string; ticker: string; kept: boolean; rule: string }[];
    };
    // Most relevant first: the rated company, the cashtag, then the broker.
    expect(out.tickers.map((t) => `${t.ticker} ${t.role}`)).toEqual(['ABBV subject', 'AMZN co-subject', 'C rating']);
    const rule = (text: string) => out.candidates.find((c) => c.text === text);
    expect(rule('AbbVie')).toMatchObject({ ticker: 'ABBV', kept: true });
    expect(rule('Apple')).toMatchObject({ ticker: 'AAPL', kept: false, rule: 'vetoed by the word after it (pie)' });
    expect(rule('Abbott')).toMatchObject({
      ticker: 'ABT',
      kept: false,
      rule: "a person's name (after the given name Greg)",
    });
    expect(rule('$amzn')).toMatchObject({ ticker: 'AMZN', kept: true });
  });

  it('prints one line per candidate, outside text escaped', async () => {
    const r = await lookup('Apple rises\u001b[2J\r\nfns: forged');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(r.stdout).toMatch(/^ {2}Apple {2}AAPL {2}name "Apple" {2}kept: /m);
    expect(r.stdout).not.toMatch(/^fns: forged/m);
  });
});

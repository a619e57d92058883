import { describe, expect, it } from 'vitest';
import { articleRules, minRelevanceDefault } from '../../src/contract/index.js';
import { enrich } from '../../src/enrich/index.js';

/** The tickers of a line as `SYMBOL relevance`, in the order the article carries them. */
const ranked = (text: string) => enrich(text).tickers.map((t) => `${t.ticker} ${t.relevance}`);
const about = (text: string) =>
  enrich(text)
    .tickers.filter((t) => t.relevance >= minRelevanceDefault)
    .map((t) => t.ticker);

describe('relevance: the story is about its subject', () => {
  it('gives a company named alone relevance 1', () => {
    expect(ranked('Nvidia shares jump after record data-center revenue')).toEqual(['NVDA 1']);
  });
  it("gives the headline's first company 1 and another company it is about 0.8", () => {
    expect(ranked('Microsoft and Alphabet lead megacap rally after upbeat cloud results')).toEqual([
      'MSFT 1',
      'GOOGL 0.8',
    ]);
  });
  it('orders the array by relevance, most relevant first', () => {
    const rels = enrich('Citigroup upgrades AbbVie to buy on strong immunology pipeline').tickers.map(
      (t) => t.relevance,
    );
    expect(rels).toEqual([...rels].sort((a, b) => b - a));
  });
});

describe('relevance: a broker giving a rating is not the story', () => {
  it('puts the rated company first and the broker at 0.2 (active form)', () => {
    expect(ranked('Citigroup upgrades AbbVie to buy on strong immunology pipeline')).toEqual(['ABBV 1', 'C 0.2']);
    expect(ranked('Jefferies cuts Diageo to hold as US demand slows')).toEqual(['DGE.L 1', 'JEF 0.2']);
    expect(ranked('UBS raises its price target on Apple to $250')).toEqual(['AAPL 1', 'UBSG.SW 0.2']);
  });
  it('reads the passive form, with the broker after `at` or `by`', () => {
    expect(ranked('AbbVie upgraded to buy at Citigroup')).toEqual(['ABBV 1', 'C 0.2']);
  });
  it("reads a broker's house name and the verbs of lists and grades kept", () => {
    expect(ranked('RBC Capital Markets upgrades Nike to outperform')).toEqual(['NKE 1', 'RY.TO 0.2']);
    expect(ranked('BofA reiterates buy on Microsoft before its developer event')).toEqual(['MSFT 1', 'BAC 0.2']);
    expect(ranked('Goldman adds Nvidia to its conviction list')).toEqual(['NVDA 1', 'GS 0.2']);
  });
  it('knows a broker even when the company it rates is not in the directory', () => {
    expect(ranked('Citi upgrades Zzyzx Holdings to buy')).toEqual(['C 0.2']);
  });
  it("does not take a company's own move for a rating", () => {
    expect(ranked('Chevron raises bid for Hess, targets savings')[0]).toMatch(/^CVX 1$/);
    expect(ranked('Apple cuts Intel orders')).toEqual(['AAPL 1', 'INTC 0.8']);
  });
});

describe('relevance: the source of a quote or forecast', () => {
  it('gives a trailing attribution 0.2', () => {
    expect(ranked('Nvidia will beat estimates again, Goldman Sachs says')).toEqual(['NVDA 1', 'GS 0.2']);
  });
  it('gives a bank whose economists speak 0.2 even when it is the only company named', () => {
    expect(ranked('Goldman Sachs economists see three Fed cuts next year')).toEqual(['GS 0.2']);
  });
  it('gives a survey, index or trailing estimate 0.2 when the story is about something else', () => {
    expect(ranked('US retail spending rose 3% in November, Mastercard SpendingPulse finds')).toEqual(['MA 0.2']);
    expect(ranked("Commercial property defaults to climb, Moody's estimates")).toEqual(['MCO 0.2']);
    expect(ranked('HSBC economists lower euro zone growth forecast')).toEqual(['HSBA.L 0.2']);
  });
  it('keeps a company speaking of itself as its subject', () => {
    expect(ranked('Apple says iPhone sales rose in China')).toEqual(['AAPL 1']);
  });
});

describe('relevance: a passing mention', () => {
  it('reads `X rival Y` as a story about Y', () => {
    expect(ranked('Walmart rival Target cuts forecast')).toEqual(['TGT 1', 'WMT 0.3']);
  });
  it('reads a relation noun after a possessive, and a parent or customer named before the company', () => {
    expect(ranked("Unilever's Indian arm Hindustan Unilever raises prices")[0]).toBe('HINDUNILVR.NS 1');
    expect(ranked('Apple assembler Jabil lifts outlook')).toEqual(['JBL 1', 'AAPL 0.3']);
  });
  it('gives a counterparty named after `order from` or `for` 0.3, but not the target of a bid', () => {
    expect(ranked('Siemens wins rail signalling order from Deutsche Bahn and Alstom')[0]).toBe('SIE.DE 1');
    expect(ranked('Broadcom builds custom chips for Meta')).toEqual(['AVGO 1', 'META 0.3']);
    expect(ranked('Unilever makes bid for Reckitt')).toEqual(['ULVR.L 1', 'RKT.L 0.8']);
  });
  it('gives a backer, and companies listed as examples, 0.3', () => {
    expect(ranked('Microsoft-backed OpenAI sues Apple')).toEqual(['AAPL 1', 'MSFT 0.3']);
    expect(ranked('Suppliers such as Intel gain as Apple boosts iPhone output')).toEqual(['AAPL 1', 'INTC 0.3']);
  });
});

describe('relevance: companies of the body', () => {
  it('ranks a company the body returns to above one it names once', () => {
    const text =
      'Tesla shares fall on weak deliveries. General Motors also fell. GM said it expects more. Ford was flat.';
    const t = enrich(text).tickers;
    expect(t[0]).toMatchObject({ ticker: 'TSLA', relevance: 1 });
    expect(t.find((x) => x.ticker === 'GM')?.relevance).toBe(0.6);
  });
});

describe('relevance: the default filter keeps the stories about a company', () => {
  it('keeps the subject and co-subjects, leaves out brokers, sources and passing mentions', () => {
    expect(about('Citigroup upgrades AbbVie to buy')).toEqual(['ABBV']);
    expect(about('Walmart rival Target cuts forecast')).toEqual(['TGT']);
    expect(about('Microsoft and Alphabet lead megacap rally')).toEqual(['MSFT', 'GOOGL']);
  });
});

describe('relevance: a text naming companies thousands of times', () => {
  it('ranks the tickers of a maximal text with a mention every few characters, sentences between them', () => {
    const symbols = ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'TSLA', 'META'];
    let text = '';
    for (let i = 0; text.length < articleRules.contentMaxLength - 20; i++)
      text += `$${symbols[i % symbols.length]} up. `;
    const tickers = enrich(text).tickers;
    // One sentence (a cashtag after a full stop starts none): the first company leads, the others are co-subjects.
    expect(tickers.map((t) => `${t.ticker} ${t.relevance}`)).toEqual(
      symbols.map((s, i) => `${s} ${i === 0 ? 1 : 0.8}`),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { articleRules } from '../../src/contract/index.js';
import { enrich, findTickers } from '../../src/enrich/index.js';

describe('cashtags', () => {
  it('reads capital cashtags, class shares included, in order of mention', () => {
    expect(findTickers('$TSLA and $BRK.B rise; $AAPL flat')).toEqual(['TSLA', 'BRK.B', 'AAPL']);
  });
  it('ignores dollar amounts and currency codes', () => {
    expect(findTickers('Deal worth $7.5 billion, or US$5bn and $US5bn')).toEqual([]);
  });
  it('reads a lower-case cashtag as traders type it, for a symbol of the dictionary only', () => {
    expect(findTickers('loading $amzn and $nvda into earnings, $btc too')).toEqual(['AMZN', 'NVDA', 'BTC-USD']);
    expect(findTickers('$hello world, a $m figure, $5m, $usd')).toEqual([]);
  });
  it('maps crypto cashtags to the pair symbol', () => {
    expect(findTickers('$BTC tops 100k')).toEqual(['BTC-USD']);
  });
});

describe('exchange-prefixed symbols', () => {
  it('gives US venues the bare symbol', () => {
    expect(findTickers('Shares of (NYSE: IBM) and NASDAQ:AAPL rose')).toEqual(['IBM', 'AAPL']);
  });
  it('gives other venues the home-market suffix, class letters with a dash', () => {
    expect(findTickers('LON:VOD, ETR:SAP, EPA:MC, LON:BT.A and HKG:700')).toEqual([
      'VOD.L',
      'SAP.DE',
      'MC.PA',
      'BT-A.L',
      '0700.HK',
    ]);
  });
  it('ignores an unknown prefix and a non-symbol after a known one', () => {
    expect(findTickers('Note: AAPL and NYSE: Stocks')).toEqual([]);
  });
});

describe('company names from the dictionary', () => {
  it('finds names and aliases (Google -> GOOGL, Facebook -> META)', () => {
    expect(findTickers('Google and Facebook face EU probe; Alphabet responds')).toEqual(['GOOGL', 'META']);
  });
  it('keeps multi-word names and names with & or accents', () => {
    expect(findTickers("Johnson & Johnson, AT&T, Mercedes-Benz, L'Oréal and Nestlé")).toEqual([
      'JNJ',
      'T',
      'MBG.DE',
      'OR.PA',
      'NESN.SW',
    ]);
  });
  it('prefers the longest name (Siemens Energy is not Siemens)', () => {
    expect(findTickers('Siemens Energy shares jump')).toEqual(['ENR.DE']);
  });
  it.each([
    ['Apple pie sales soar at diners'],
    ['Big Apple rents rise'],
    ['Meta-analysis finds coffee is safe'],
    ['Deforestation in the Amazon rainforest falls'],
    ['an apple a day'],
  ])('is not fooled by a name used as a word: %s', (text) => {
    expect(findTickers(text)).toEqual([]);
  });
  it('reads a name written with initials and their full stops, or with a possessive inside it', () => {
    expect(findTickers('J.B. Hunt raises prices; T. Rowe Price sees outflows; U.S. Bancorp beats')).toEqual([
      'JBHT',
      'TROW',
      'USB',
    ]);
    expect(findTickers("St James's Place fined by regulator")).toEqual(['STJ.L']);
  });
  it("reads a name right after a wire's capitals tag, not after a word (BRIEF-Teradyne, anti-Apple)", () => {
    expect(findTickers('BRIEF-Teradyne sees third-quarter revenue above estimates')).toEqual(['TER']);
    expect(findTickers('UPDATE 2-Nike shares fall on China')).toEqual(['NKE']);
    expect(findTickers('Activists start anti-Apple campaign')).toEqual([]);
  });
  it.each([
    ['Texas Governor Greg Abbott hails new chip plant'],
    ['Fiona Apple tour sells out in minutes'],
    ['Mike Tyson-backed drink wins shelf space'],
    ['The chief executive, Mr Pearson, said the plan was on track'],
    ['Senator Dave McCormick questions insurers'],
  ])("is not fooled by a person's name (a title or a given name before it): %s", (text) => {
    expect(findTickers(text)).toEqual([]);
  });
  it('reads a capitalised verb of a Title Case headline as no given name', () => {
    expect(findTickers('Investors Mark Nvidia Earnings As Chip Rally Fades')).toEqual(['NVDA']);
    expect(findTickers('Hedge Funds Rob Tesla Of Its Gains')).toEqual(['TSLA']);
  });
  it('keeps the company when the given name is part of its name', () => {
    expect(findTickers('John Deere cuts outlook; Ralph Lauren shares jump')).toEqual(['DE', 'RL']);
  });
  it('keeps a name glued to a business compound (Microsoft-backed)', () => {
    expect(findTickers('Microsoft-backed OpenAI raises funds')).toEqual(['MSFT']);
  });
});

describe('common-word names need corporate context', () => {
  it.each([
    ['Target cuts annual forecast', 'TGT'],
    ["Target's quarterly sales drop", 'TGT'],
    ['Retailer Target to close stores', 'TGT'],
    ['Ford shares fall after recall', 'F'],
    ['Shell profit beats forecasts', 'SHEL.L'],
    ['Visa Inc revenue rises', 'V'],
  ])('accepts %s', (text, ticker) => {
    expect(findTickers(text)).toEqual([ticker]);
  });
  it.each([
    ['ECB keeps target rate unchanged'],
    ['Target rate unchanged'],
    ['Harrison Ford to star in new film'],
    ['UK tightens visa rules'],
    ['Visa rules for students tightened'],
    ['Gap between rich and poor widens'],
    ['Buffett, the Oracle of Omaha, speaks'],
  ])('refuses %s', (text) => {
    expect(findTickers(text)).toEqual([]);
  });
});

describe('at most the contract maxItems tickers, each matching the contract pattern', () => {
  it('caps the list', () => {
    const many = Array.from(
      { length: articleRules.tickersMaxItems + 20 },
      (_, i) => `$Z${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26))}`,
    ).join(' ');
    const { tickers } = enrich(`Movers: ${many}`);
    expect(tickers).toHaveLength(articleRules.tickersMaxItems);
    for (const t of tickers) expect(t.ticker).toMatch(articleRules.tickerPattern);
  });
  it('lists a symbol once however often it is named', () => {
    expect(enrich('Apple, $AAPL and NASDAQ:AAPL').tickers.map((t) => t.ticker)).toEqual(['AAPL']);
  });
});

describe("a name inside another company's name is not that company", () => {
  it('refuses a short name followed by a word that makes another listed company of its family', () => {
    expect(findTickers('Quanta Computer raises AI server forecast')).toEqual([]);
    expect(findTickers('Quanta shares rise on grid spending')).toEqual(['PWR']);
  });
  it("keeps the company's own longer name, and a bank's or broker's own arm", () => {
    expect(findTickers('Ford Motor recalls 850,000 vehicles')).toEqual(['F']);
    expect(findTickers('RBC Capital Markets upgrades Nike')).toEqual(['RY.TO', 'NKE']);
  });
  it('keeps a company written by its full name with its industry word', () => {
    expect(findTickers('Palantir Technologies shares rose 3%')).toEqual(['PLTR']);
    expect(findTickers('Hormel Foods misses on earnings')).toEqual(['HRL']);
    expect(findTickers('Verizon Communications cuts 13,000 jobs')).toEqual(['VZ']);
    expect(findTickers('Infineon Technologies raises outlook')).toEqual(['IFX.DE']);
  });
  it('reads & as and, and a slash between the words of a name', () => {
    expect(findTickers('Kulicke & Soffa Industries beats estimates')).toEqual(['KLIC']);
    expect(findTickers('Procter and Gamble raises outlook')).toEqual(['PG']);
    expect(findTickers('Cullen/Frost reports record deposits')).toEqual(['CFR']);
  });
  it("reads the directory's vetoes after a name, and after its possessive", () => {
    expect(findTickers('Vodafone Idea raises mobile tariffs')).toEqual([]);
    expect(findTickers("Pandora's box of tariffs is open")).toEqual([]);
    expect(findTickers("Pandora's quarterly sales beat forecasts")).toEqual(['PNDORA.CO']);
  });
});

describe("a person's name with a middle initial is no company", () => {
  it('refuses the surname after a given name and an initial', () => {
    expect(findTickers('William H. Macy joins cast of legal drama')).toEqual([]);
  });
});

describe('symbols are read once, and names with a plus sign', () => {
  it("does not read a cashtag's letters again as a company name", () => {
    expect(findTickers('$SONY ADR up 5% on PlayStation numbers')).toEqual(['SONY']);
  });
  it('reads one-letter cashtags of companies ($C, $T), not the currency prefixes ($US, $A)', () => {
    expect(findTickers('$C and $T lead; the $US and $A slip')).toEqual(['C', 'T']);
  });
  it('matches names joined by a plus sign', () => {
    expect(findTickers('K+S raises potash outlook')).toEqual(['SDF.DE']);
  });
});

import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { articleRules } from '../../src/contract/index.js';
import { COMPANIES, DIRECTORY_FILES, mergeDirectory } from '../../src/enrich/directory.js';
import { isUsListing, longerNameProblem, namesAgree } from '../../scripts/check-directory.js';

describe('the company directory: every file, one owner per symbol, contract symbols', () => {
  it('loads every file of src/enrich/resources/directory/', () => {
    const files = readdirSync(new URL('../../src/enrich/resources/directory/', import.meta.url)).filter((f) =>
      f.endsWith('.json'),
    );
    for (const f of files)
      expect([...DIRECTORY_FILES.keys()], `${f} is not listed in src/enrich/directory.ts`).toContain(f);
  });
  it('refuses a symbol given in two files, naming both', () => {
    expect(() =>
      mergeDirectory(
        new Map([
          ['a.json', { X: 'Xylo' }],
          ['b.json', { X: 'Xeno' }],
        ]),
      ),
    ).toThrow('X is in both a.json and b.json');
  });
  it('gives each name to one company (a home listing owns its names; its ADR is reached by cashtag or exchange prefix)', () => {
    const owner = new Map<string, string>();
    const twice: string[] = [];
    for (const [symbol, names] of COMPANIES) {
      for (const n of names.split('|')) {
        const key = n.replace(/^\?/, '').toLowerCase();
        const first = owner.get(key);
        if (first !== undefined && first !== symbol) twice.push(`${key}: ${first} and ${symbol}`);
        owner.set(key, symbol);
      }
    }
    expect(twice).toEqual([]);
  });
  it('writes every symbol as the contract allows, every entry with a name', () => {
    for (const [symbol, names] of COMPANIES) {
      expect(articleRules.tickerPattern.test(symbol), symbol).toBe(true);
      expect(
        names.split('|').every((n) => n.replace(/^\?/, '').trim().length >= 2),
        symbol,
      ).toBe(true);
    }
  });
});

describe('check:directory reads names as the SEC writes them', () => {
  it('agrees on the same company written another way, not on another company', () => {
    expect(namesAgree('Apple Inc', 'Apple Inc.')).toBe(true);
    expect(namesAgree('JPMorgan Chase', 'JPMORGAN CHASE & CO')).toBe(true);
    expect(namesAgree('Eli Lilly', 'ELI LILLY & Co')).toBe(true);
    expect(namesAgree('Amazon.com', 'AMAZON COM INC')).toBe(true);
    expect(namesAgree('F.N.B. Corp', 'FNB CORP/PA/')).toBe(true);
    expect(namesAgree('W.R. Berkley', 'BERKLEY W R CORP')).toBe(true);
    expect(namesAgree('Wabtec', 'WESTINGHOUSE AIR BRAKE TECHNOLOGIES CORP')).toBe(false);
    expect(namesAgree('American Express', 'AMERICAN AIRLINES GROUP INC.')).toBe(false);
  });
  it('finds a company written with the next word of its SEC name that gets no symbol', () => {
    expect(longerNameProblem('PWR', ['Quanta'], ['QUANTA COMPUTER INC'])).toBe(
      '"Quanta Computer" (SEC "QUANTA COMPUTER INC") finds no symbol',
    );
    expect(longerNameProblem('F', ['Ford'], ['FORD MOTOR CO'])).toBeUndefined();
  });
  it('takes bare symbols and share classes as US listings, home-market suffixes not', () => {
    expect(['AAPL', 'BRK.B', 'BF.B'].every(isUsListing)).toBe(true);
    expect(['VOD.L', '7203.T', 'SAP.DE', 'BTC-USD'].some(isUsListing)).toBe(false);
  });
});

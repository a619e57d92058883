import { describe, expect, it } from 'vitest';
import { NEAR_DUPLICATE_WINDOW_MS, isNearDuplicate, nearDuplicateKeys, prepare } from '../../src/dedup/near.js';
import { sameNumber, slotConflict } from '../../src/dedup/similarity.js';

describe('near-duplicate keys', () => {
  it('are short strings, deterministic, and shared by a reworded duplicate', () => {
    const a = nearDuplicateKeys('Fed raises rates by 25 basis points');
    const b = nearDuplicateKeys('BREAKING: Federal Reserve hikes interest rates 25bps');
    expect(a).toEqual(nearDuplicateKeys('Fed raises rates by 25 basis points'));
    for (const k of a) expect(k.length).toBeLessThanOrEqual(12);
    expect(a.some((k) => b.includes(k))).toBe(true);
  });
  it('are shared through an anchor key when the wording differs beyond the MinHash bands', () => {
    const a = nearDuplicateKeys('Lloyds sets aside further £1 billion for motor finance claims');
    const b = nearDuplicateKeys('Lloyds Banking Group adds £1bn to car finance provision');
    expect(a.some((k) => b.includes(k))).toBe(true);
  });
  it('are the same for the text and its prepared form', () => {
    const text = 'Nvidia to invest $5 billion in Intel, co-develop chips';
    expect(nearDuplicateKeys(prepare(text))).toEqual(nearDuplicateKeys(text));
  });
  it('are none for an empty headline', () => {
    expect(nearDuplicateKeys('   ')).toEqual([]);
  });
});

describe('near-duplicate decision', () => {
  it.each([
    ['Nvidia shares jump 6% after record data-center revenue beats estimates', 'NVIDIA stock climbs 6 percent as data center sales top forecasts'],
    ['Tesla recalls 200,000 vehicles over rear-view camera software fault', 'Tesla recalling about 200,000 cars due to faulty backup camera software'],
    ['BREAKING: ECB cuts deposit rate to 2.0%', 'European Central Bank lowers deposit rate to 2%'],
    ['Siemens to buy Altair Engineering for $10 billion', 'Siemens agrees to acquire Altair in $10.6bn deal'],
    ['Delta Air Lines pulls 2025 forecast citing economic uncertainty', 'Delta withdraws full-year guidance on uncertain economy'],
    ['Copper hits record on supply disruptions at Chilean mines', 'Copper prices surge to all-time high as Chile mine disruptions hit supply'],
  ])('same story reworded: %s', (a, b) => {
    expect(isNearDuplicate(a, b)).toBe(true);
  });
  it.each([
    ['Apple profit rises 8% in third quarter', 'Apple profit rises 11% in fourth quarter', 'numbers differ'],
    ['Nvidia shares jump 6% after revenue beats estimates', 'Nvidia shares drop 6% after revenue misses estimates', 'direction differs'],
    ['Tesla recalls 200,000 vehicles over camera fault', 'Tesla to cut 10% of global workforce', 'event differs'],
    ['Samsung profit jumps on chip recovery', 'SK Hynix profit jumps on chip recovery', 'company differs'],
    ['Airbus raises delivery target', 'Boeing raises delivery target', 'ticker differs'],
    ['US consumer prices rise 0.4% in August', 'US producer prices rise 0.4% in August', 'qualifier differs'],
    ['Euro zone inflation eases to 2.2% in March', 'Euro zone inflation eases to 2.2% in April', 'month differs'],
    ['Brazil central bank raises Selic rate to 14.25%', 'Brazil central bank raises Selic rate to 14.75%', 'precise figures differ'],
    ['Gold hits record above $4,000 an ounce', 'Gold falls below $4,000 an ounce as dollar firms', 'main-clause direction differs'],
    ['Boeing machinists vote to accept contract, ending seven-week strike', 'Boeing machinists vote to reject contract, extending strike', 'outcome differs'],
    ['HPE completes purchase of Juniper Networks for $14 billion', 'DOJ sues to block HPE\'s $14 billion Juniper deal', 'a lawsuit on one side only'],
    ['ECB holds deposit rate at 2% for third straight meeting', 'ECB cuts deposit rate to 2% in eighth cut', 'policy move differs'],
    ['Amazon shares jump 10% as cloud growth accelerates', 'Amazon shares jump 10% as AWS signs $38 billion OpenAI deal', 'an amount on one side only'],
  ])('different stories: %s / %s (%s)', (a, b) => {
    expect(isNearDuplicate(a, b)).toBe(false);
  });
  it('is symmetric', () => {
    const a = 'Intel to cut 15% of workforce after dismal quarter';
    const b = 'Intel slashing 15% of jobs following weak quarterly results';
    expect(isNearDuplicate(a, b)).toBe(isNearDuplicate(b, a));
  });
});

describe('near-duplicate figures', () => {
  it('treat a rounder figure as the precise one, not two precise figures that differ', () => {
    const v = (value: number, decimals: number) => ({ value, kind: 'b' as const, decimals });
    expect(sameNumber(v(10, 0), v(10.6, 1))).toBe(true);
    expect(sameNumber(v(14.25, 2), v(14.75, 2))).toBe(false);
    expect(sameNumber(v(2, 0), v(2.25, 2))).toBe(false);
  });
});

describe('near-duplicate guard: another name in the same slot', () => {
  it.each([
    ['Trump picks Kevin Hassett to lead the Fed', 'Trump picks Kevin Warsh to lead the Fed', 'person (shared first name)'],
    ['Intel jumps on report of Apple chip talks', 'Intel jumps on report of Nvidia chip talks', 'company in the second slot'],
    ['Carlyle closes $15 billion buyout fund', 'KKR closes $15 billion buyout fund', 'a name against a symbol'],
    ['Moody\'s downgrades Austria to Aa2', 'Moody\'s downgrades Finland to Aa2', 'country'],
    ['Japan\'s exports rise 4% in May', 'Korea\'s exports rise 4% in May', 'country in title position'],
    ['Bank of Canada cuts rates by 25 basis points', 'Bank of Korea cuts rates by 25 basis points', 'central bank'],
    ['ECB holds rates steady', 'Fed holds rates steady', 'central bank by its short name'],
    ['Netflix opens studio in Madrid', 'Netflix opens studio in Tokyo', 'city'],
  ])('different stories: %s / %s (%s)', (a, b) => {
    expect(slotConflict(prepare(a), prepare(b))).toBe(true);
    expect(isNearDuplicate(a, b)).toBe(false);
  });
  it('is no conflict when a rewording adds names in other places', () => {
    const a = 'ChatGPT maker OpenAI raises $40 billion in record round';
    const b = 'OpenAI closes $40 billion funding round led by SoftBank';
    expect(slotConflict(prepare(a), prepare(b))).toBe(false);
  });
  it('is no conflict when the place is named on one side only, or the same central bank in two spellings', () => {
    expect(slotConflict(prepare('US imposes 40% tariff on Vietnam'), prepare('Trump slaps 40 percent tariffs on Vietnamese goods'))).toBe(false);
    expect(slotConflict(prepare('BOJ keeps rates at 0.5%'), prepare('Bank of Japan holds interest rates at 0.5 percent'))).toBe(false);
    expect(isNearDuplicate('Reserve Bank of Australia cuts cash rate to 3.6%', 'RBA lowers cash rate to 3.60 per cent')).toBe(true);
  });
});

describe('near-duplicate guard: percentages are rounded, not approximated', () => {
  const pc = (value: number, decimals: number) => ({ value, kind: '%' as const, decimals });
  it('matches a percentage to its rounding', () => {
    expect(sameNumber(pc(4.4, 1), pc(4.35, 2))).toBe(true);
    expect(sameNumber(pc(12, 0), pc(12.4, 1))).toBe(true);
  });
  it('does not match another level of a similar size', () => {
    expect(sameNumber(pc(4.1, 1), pc(4.35, 2))).toBe(false);
    expect(sameNumber(pc(40, 0), pc(40.5, 1))).toBe(false);
    expect(sameNumber(pc(0, 0), pc(0.25, 2))).toBe(false);
    expect(isNearDuplicate('Poland\'s central bank cuts key rate to 4.5%', 'Poland\'s central bank cuts key rate to 4.25%')).toBe(false);
  });
  it('still lets a round amount of money stand for a precise one', () => {
    const bn = (value: number, decimals: number) => ({ value, kind: 'b' as const, decimals });
    expect(sameNumber(bn(10, 0), bn(10.6, 1))).toBe(true);
  });
});

describe('near-duplicate figures written another way', () => {
  it('reads $4T as $4 trillion', () => {
    expect(isNearDuplicate('MSFT tops $4T market cap', 'Microsoft market value passes $4 trillion')).toBe(true);
    expect(isNearDuplicate('MSFT tops $4T market cap', 'Microsoft market value passes $3 trillion')).toBe(false);
  });
});

describe('near-duplicate guard: a charge is not a contract', () => {
  it('tells a write-down from a contract win at the same company and amount', () => {
    expect(isNearDuplicate('Raytheon takes $2.5 billion charge on fixed-price programs', 'Raytheon wins $2.5 billion Navy radar contract')).toBe(false);
  });
});

describe('prepared forms', () => {
  it('decide like the texts they come from', () => {
    const a = 'Intel to cut 15% of workforce after dismal quarter';
    const b = 'Intel slashing 15% of jobs following weak quarterly results';
    const c = 'Intel wins $8.5 billion in CHIPS Act grants';
    expect(isNearDuplicate(prepare(a), prepare(b))).toBe(isNearDuplicate(a, b));
    expect(isNearDuplicate(prepare(a), c)).toBe(isNearDuplicate(a, c));
    expect(isNearDuplicate(a, b)).toBe(true);
    expect(isNearDuplicate(a, c)).toBe(false);
  });
});

describe('near-duplicate window', () => {
  it('is 24 hours', () => {
    expect(NEAR_DUPLICATE_WINDOW_MS).toBe(24 * 60 * 60 * 1000);
  });
});

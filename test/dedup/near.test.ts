import { describe, expect, it } from 'vitest';
import { NEAR_DUPLICATE_WINDOW_MS, isNearDuplicate, nearDuplicateKeys } from '../../src/dedup/near.js';

describe('near-duplicate keys', () => {
  it('are short strings, deterministic, and shared by a reworded duplicate', () => {
    const a = nearDuplicateKeys('Fed raises rates by 25 basis points');
    const b = nearDuplicateKeys('BREAKING: Federal Reserve hikes interest rates 25bps');
    expect(a).toEqual(nearDuplicateKeys('Fed raises rates by 25 basis points'));
    for (const k of a) expect(k.length).toBeLessThanOrEqual(12);
    expect(a.some((k) => b.includes(k))).toBe(true);
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
  ])('different stories: %s / %s (%s)', (a, b) => {
    expect(isNearDuplicate(a, b)).toBe(false);
  });
  it('is symmetric', () => {
    const a = 'Intel to cut 15% of workforce after dismal quarter';
    const b = 'Intel slashing 15% of jobs following weak quarterly results';
    expect(isNearDuplicate(a, b)).toBe(isNearDuplicate(b, a));
  });
});

describe('near-duplicate window', () => {
  it('is 24 hours', () => {
    expect(NEAR_DUPLICATE_WINDOW_MS).toBe(24 * 60 * 60 * 1000);
  });
});

import { describe, expect, it } from 'vitest';
import { enrich } from '../../src/enrich/index.js';

const auto = (t: string) => enrich(t).urgency;

describe('urgency: the source setting wins', () => {
  it('uses breaking/flash/regular as given, whatever the headline', () => {
    expect(enrich('Quiet day', { urgency: 'breaking' }).urgency).toBe('breaking');
    expect(enrich('BREAKING: Fed hikes', { urgency: 'regular' }).urgency).toBe('regular');
  });
});

describe('urgency auto rules', () => {
  it.each([
    'BREAKING: Fed hikes',
    'Breaking - ECB cuts',
    '** Breaking: oil jumps',
    '[BREAKING] Apple recalls',
    'BREAKING NEWS: SEC sues',
    'URGENT: market halted',
    'BREAKING Fed hikes',
  ])('breaking: %s', (t) => expect(auto(t)).toBe('breaking'));
  it.each([
    'FLASH: oil jumps',
    'Flash | gold slips',
    '*FED RAISES RATES BY 25BPS',
    '* Apple halts trading',
    'ECB CUTS DEPOSIT RATE TO 2%',
  ])('flash: %s', (t) => expect(auto(t)).toBe('flash'));
  it.each([
    'Oil jumps',
    'Breaking ground on new plant, Tesla says',
    'Flashy IPO draws crowds',
    'FED HIKES',
    'Alert investors see risks ahead',
  ])('regular: %s', (t) => expect(auto(t)).toBe('regular'));
});

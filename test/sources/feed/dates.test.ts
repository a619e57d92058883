import { describe, expect, it } from 'vitest';
import { feedDate, parseIsoDate, parseRfc822 } from '../../../src/sources/feed/dates.js';

describe('RFC 822 dates with zone names', () => {
  it.each([
    ['Tue, 10 Jun 2025 04:00:00 GMT', '2025-06-10T04:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 UT', '2025-06-10T04:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 Z', '2025-06-10T04:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 EST', '2025-06-10T09:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 EDT', '2025-06-10T08:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 CST', '2025-06-10T10:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 CDT', '2025-06-10T09:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 MST', '2025-06-10T11:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 MDT', '2025-06-10T10:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 PST', '2025-06-10T12:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 PDT', '2025-06-10T11:00:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 +0530', '2025-06-09T22:30:00.000Z'],
    ['Tue, 10 Jun 2025 04:00:00 -03:00', '2025-06-10T07:00:00.000Z'],
  ])('%s', (raw, iso) => {
    expect(feedDate(raw)).toBe(iso);
  });

  it('reads the military letters as UTC, as RFC 2822 §4.3 says (their RFC 822 signs were wrong)', () => {
    expect(feedDate('10 Jun 2025 04:00:00 A')).toBe('2025-06-10T04:00:00.000Z');
    expect(feedDate('10 Jun 2025 04:00:00 Y')).toBe('2025-06-10T04:00:00.000Z');
    expect(feedDate('10 Jun 2025 04:00:00 J')).toBeNull(); // J is not a zone
  });

  it('accepts the common spellings: no day name, full names, no seconds, two-digit years', () => {
    expect(feedDate('10 Jun 2025 04:00 GMT')).toBe('2025-06-10T04:00:00.000Z');
    expect(feedDate('Tuesday, 10 June 2025 04:00:00 GMT')).toBe('2025-06-10T04:00:00.000Z');
    expect(feedDate('Tue, 10 Jun 25 04:00:00 GMT')).toBe('2025-06-10T04:00:00.000Z');
    expect(feedDate('Thu, 10 Jun 99 04:00:00 GMT')).toBe('1999-06-10T04:00:00.000Z');
    expect(feedDate('Tue, 3 Jun 2025 4:05:06 GMT (Coordinated Universal Time)')).toBe('2025-06-03T04:05:06.000Z');
  });

  it('reads a leap second as the next second', () => {
    expect(parseRfc822('31 Dec 2016 23:59:60 GMT')).toBe(Date.UTC(2017, 0, 1));
  });

  it('never invents: no zone, an unknown zone, an impossible date or garbage is unreadable', () => {
    expect(feedDate('Tue, 10 Jun 2025 04:00:00')).toBeNull();
    expect(feedDate('Tue, 10 Jun 2025 04:00:00 XYZ')).toBeNull();
    expect(feedDate('Fri, 30 Feb 2024 04:00:00 GMT')).toBeNull();
    expect(feedDate('Tue, 10 Jux 2025 04:00:00 GMT')).toBeNull();
    expect(feedDate('10 Jun 2025 24:00:00 GMT')).toBeNull();
    expect(feedDate('sometime last week')).toBeNull();
    expect(feedDate('')).toBeNull();
    expect(feedDate(undefined)).toBeNull();
  });
});

describe('RFC 3339 / W3CDTF dates', () => {
  it('reads offsets and fractions to UTC with milliseconds', () => {
    expect(feedDate('2025-06-12T13:00:00.250+01:00')).toBe('2025-06-12T12:00:00.250Z');
    expect(feedDate('2025-06-12T18:30:02-05:00')).toBe('2025-06-12T23:30:02.000Z');
    expect(feedDate('2025-06-12t18:30:02z')).toBe('2025-06-12T18:30:02.000Z');
  });
  it('accepts a space for T, a missing seconds field and a colon-less offset', () => {
    expect(parseIsoDate('2025-06-12 15:00:00Z')).toBe(Date.UTC(2025, 5, 12, 15));
    expect(parseIsoDate('2025-06-12T15:00Z')).toBe(Date.UTC(2025, 5, 12, 15));
    expect(parseIsoDate('2025-06-12T15:00:00+0200')).toBe(Date.UTC(2025, 5, 12, 13));
  });
  it('is unreadable without a time or a zone, or on an impossible date', () => {
    expect(feedDate('2025-06-12')).toBeNull();
    expect(feedDate('2025-06-12T15:00:00')).toBeNull();
    expect(feedDate('2025-02-30T10:00:00Z')).toBeNull();
    expect(feedDate('2025-06-12T25:00:00Z')).toBeNull();
  });
});

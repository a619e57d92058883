import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../../src/sources/feed/index.js';

const base = { baseMs: 1_000, maxMs: 60_000 };

describe('backoff after consecutive failures', () => {
  it('doubles from the base per failure (equal jitter: between half the step and the step)', () => {
    expect(backoffMs(1, { ...base, random: () => 0 })).toBe(500);
    expect(backoffMs(1, { ...base, random: () => 0.999999 })).toBe(1_000);
    expect(backoffMs(2, { ...base, random: () => 0 })).toBe(1_000);
    expect(backoffMs(3, { ...base, random: () => 0.5 })).toBe(3_000);
    expect(backoffMs(4, { ...base, random: () => 0 })).toBe(4_000);
  });
  it('is capped at maxMs, even after very many failures', () => {
    expect(backoffMs(10, { ...base, random: () => 0.999999 })).toBe(60_000);
    expect(backoffMs(5_000, { ...base, random: () => 0.999999 })).toBe(60_000);
    expect(backoffMs(5_000, { ...base, random: () => 0 })).toBe(30_000);
  });
  it('spreads retries: different random draws give different delays', () => {
    const delays = new Set([0, 0.25, 0.5, 0.75].map((r) => backoffMs(6, { ...base, random: () => r })));
    expect(delays.size).toBe(4);
  });
  it('lets a longer Retry-After win, and a shorter one not', () => {
    expect(backoffMs(1, { ...base, random: () => 0, retryAfterMs: 120_000 })).toBe(120_000);
    expect(backoffMs(4, { ...base, random: () => 0, retryAfterMs: 10 })).toBe(4_000);
    expect(backoffMs(0, { ...base, retryAfterMs: 5_000 })).toBe(5_000);
  });
  it('bounds an absurd Retry-After to a day (or the given bound)', () => {
    expect(backoffMs(1, { ...base, random: () => 0, retryAfterMs: 10 ** 12 })).toBe(86_400_000);
    expect(backoffMs(1, { ...base, random: () => 0, retryAfterMs: 10 ** 12, maxRetryAfterMs: 3_600_000 })).toBe(
      3_600_000,
    );
  });
  it('is no delay without failures, and never negative or fractional', () => {
    expect(backoffMs(0, base)).toBe(0);
    expect(backoffMs(-3, base)).toBe(0);
    expect(backoffMs(1, { baseMs: 333, maxMs: 10_000, random: () => 0.3 })).toBe(Math.round(166.5 + 166.5 * 0.3));
    expect(backoffMs(1, { ...base, retryAfterMs: -5, random: () => 0 })).toBe(500);
  });
});

/**
 * The human-readable tables in the spec descriptions must agree with the machine-readable extensions
 * (`x-plans`, `x-stream`) that the code reads: a change to one without the other fails here.
 */
import { describe, expect, it } from 'vitest';
import { loadYaml } from '../support/specs.js';

const openapi = loadYaml('openapi.yaml');
const asyncapi = loadYaml('asyncapi.yaml');

function tableRows(markdown: string, heading: string): string[][] {
  const section = markdown.split(`## ${heading}`)[1]!.split('\n## ')[0]!;
  return section
    .split('\n')
    .filter((l) => l.startsWith('|') && !l.startsWith('|---'))
    .slice(1)
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
}

describe('the plans table of openapi.yaml matches x-plans', () => {
  const rows = tableRows(openapi.info.description, 'Plans');
  const tiers = openapi['x-plans'].tiers;

  it('lists every tier of the Tier enum, in order', () => {
    expect(rows.map((r) => r[0])).toEqual(openapi.components.schemas.Tier.enum);
    expect(Object.keys(tiers)).toEqual(openapi.components.schemas.Tier.enum);
  });

  it.each(Object.keys(tiers))('tier %s', (tier) => {
    const [, monthly, annual, rate, lookback, stream, search, tickers] = rows.find((r) => r[0] === tier)!;
    const plan = tiers[tier];
    const yesNo = (b: boolean) => (b ? 'yes' : 'no');
    expect(monthly).toBe(plan.monthlyPriceUsd === undefined ? '–' : String(plan.monthlyPriceUsd));
    expect(annual).toBe(plan.annualPriceUsd === undefined ? '–' : String(plan.annualPriceUsd));
    expect(rate).toBe(plan.rateLimit === 0 ? 'blocked' : `${plan.rateLimit} req/min`);
    const lb =
      plan.lookbackHours === 0
        ? '–'
        : plan.lookbackHours % 24 === 0 && plan.lookbackHours > 24
          ? `${plan.lookbackHours / 24} days`
          : `${plan.lookbackHours} hours`;
    expect(lookback).toBe(lb);
    expect([stream, search, tickers]).toEqual([yesNo(plan.stream), yesNo(plan.search), yesNo(plan.tickers)]);
  });

  it('prices annual plans at 30% off twelve months', () => {
    for (const plan of Object.values<any>(tiers).filter((p) => p.paid)) {
      expect(plan.annualPriceUsd).toBe(Math.round(plan.monthlyPriceUsd * 12 * 0.7));
    }
  });

  it('documents the rate-limit maximum that the schemas allow', () => {
    const max = Math.max(...Object.values<any>(tiers).map((p) => p.rateLimit));
    expect(openapi.components.schemas.Usage.properties.rate_limit.maximum).toBe(max);
    expect(openapi.components.headers['X-RateLimit-Limit'].schema.maximum).toBe(max);
  });
});

describe('the close-code table of asyncapi.yaml matches x-stream', () => {
  const rows = tableRows(asyncapi.info.description, 'Close codes');
  const codes = Object.values<any>(asyncapi['x-stream'].closeCodes);

  it('has one row per close reason, with the same code and text', () => {
    expect(rows.map((r) => [Number(r[0]), r[1]!.replace(/`/g, '')])).toEqual(codes.map((c) => [c.code, c.reason]));
  });

  it('keeps every close reason within the 123-byte limit of a WebSocket close frame', () => {
    for (const c of codes) expect(Buffer.byteLength(c.reason)).toBeLessThanOrEqual(123);
  });
});

describe('server descriptions are plain text', () => {
  // Redoc shows a server's description as written, without Markdown: `code`, **bold** or [links](…)
  // would show their marks. (The REST page's rendered text is checked in test/docs/rendered.test.ts.)
  const servers = [
    ...openapi.servers.map((s: any, i: number) => [`openapi.yaml servers[${i}]`, s.description] as const),
    ...Object.entries<any>(asyncapi.servers).map(
      ([name, s]) => [`asyncapi.yaml servers.${name}`, s.description] as const,
    ),
  ];

  it.each(servers)('%s', (_where, description) => {
    expect(typeof description).toBe('string');
    expect(description).not.toMatch(/`|\*\*|\]\(|^#|\n/);
  });
});

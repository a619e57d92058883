import { describe, expect, it } from 'vitest';
import { ContractViolation, createResponseCheck } from '../../src/http/response-check.js';
import { plans, problems } from '../../src/contract/index.js';

describe('response validation used by every test run', () => {
  const check = createResponseCheck();
  it('accepts a response that matches the contract', () => {
    expect(() =>
      check('getAccountUsage', 200, 'application/json', {
        tier: 'max',
        rate_limit: plans.max.rateLimit,
        period_end: null,
      }),
    ).not.toThrow();
    expect(() => check('searchNews', 503, 'application/problem+json', problems.embeddingUnavailable)).not.toThrow();
  });
  it('rejects a body, a status or a media type the contract does not document', () => {
    expect(() =>
      check('getAccountUsage', 200, 'application/json', {
        tier: 'gold',
        rate_limit: plans.max.rateLimit,
        period_end: null,
      }),
    ).toThrow(ContractViolation);
    expect(() => check('getAccountUsage', 429, 'application/problem+json', problems.rateLimitExceeded)).toThrow(
      ContractViolation,
    );
    expect(() => check('listNews', 200, 'text/plain', {})).toThrow(ContractViolation);
  });
  it('rejects tickers missing from a search result', () => {
    const article = {
      id: '01M7Z87BJ3K8W3Q2ZP7R9T4V6X',
      content: 'x',
      urgency: 'regular',
      sentiment: null,
      published_at: null,
      received_at: '2026-11-21T12:00:00Z',
      source: null,
      url: null,
    };
    expect(() =>
      check('searchNews', 200, 'application/json', { count: 1, query: 'xx', articles: [article], next: null }),
    ).toThrow(ContractViolation);
    expect(() =>
      check('searchNews', 200, 'application/json', {
        count: 1,
        query: 'xx',
        articles: [{ ...article, tickers: [] }],
        next: null,
      }),
    ).not.toThrow();
  });
  it('rejects an article without source or url (keys present on every article since 1.2.0), or with a source or url off the contract', () => {
    const article = {
      id: '01M7Z87BJ3K8W3Q2ZP7R9T4V6X',
      content: 'x',
      urgency: 'regular',
      sentiment: null,
      published_at: null,
      received_at: '2026-11-21T12:00:00Z',
    };
    const list = (a: object) => ({ count: 1, articles: [a], next: null });
    expect(() => check('listNews', 200, 'application/json', list(article))).toThrow(ContractViolation);
    expect(() =>
      check('listNews', 200, 'application/json', list({ ...article, source: null, url: null })),
    ).not.toThrow();
    expect(() =>
      check(
        'listNews',
        200,
        'application/json',
        list({ ...article, source: 'reuters-markets', url: 'https://www.reuters.example/a' }),
      ),
    ).not.toThrow();
    expect(() =>
      check('listNews', 200, 'application/json', list({ ...article, source: 'Reuters Markets', url: null })),
    ).toThrow(ContractViolation);
    expect(() =>
      check('listNews', 200, 'application/json', list({ ...article, source: null, url: 'see website' })),
    ).toThrow(ContractViolation);
  });
});

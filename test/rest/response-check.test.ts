import { describe, expect, it } from 'vitest';
import { ContractViolation, createResponseCheck } from '../../src/http/response-check.js';
import { plans, problems } from '../../src/contract/index.js';

describe('response validation used by every test run', () => {
  const check = createResponseCheck();
  it('accepts a response that matches the contract', () => {
    expect(() => check('getAccountUsage', 200, 'application/json', { tier: 'max', rate_limit: plans.max.rateLimit, period_end: null })).not.toThrow();
    expect(() => check('searchNews', 503, 'application/problem+json', problems.embeddingUnavailable)).not.toThrow();
  });
  it('rejects a body, a status or a media type the contract does not document', () => {
    expect(() => check('getAccountUsage', 200, 'application/json', { tier: 'gold', rate_limit: plans.max.rateLimit, period_end: null })).toThrow(ContractViolation);
    expect(() => check('getAccountUsage', 429, 'application/problem+json', problems.rateLimitExceeded)).toThrow(ContractViolation);
    expect(() => check('listNews', 200, 'text/plain', {})).toThrow(ContractViolation);
  });
  it('rejects tickers missing from a search result', () => {
    const article = { id: '01M7Z87BJ3K8W3Q2ZP7R9T4V6X', content: 'x', urgency: 'regular', sentiment: null, published_at: null, received_at: '2026-11-21T12:00:00Z' };
    expect(() => check('searchNews', 200, 'application/json', { count: 1, query: 'xx', articles: [article], next: null })).toThrow(ContractViolation);
    expect(() => check('searchNews', 200, 'application/json', { count: 1, query: 'xx', articles: [{ ...article, tickers: [] }], next: null })).not.toThrow();
  });
});

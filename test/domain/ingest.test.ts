import { describe, expect, it } from 'vitest';
import { parseArticle, parseNdjson } from '../../src/ingest/parse.js';
import { enrich } from '../../src/enrich/index.js';

describe('ingestion input: NDJSON, bad lines reported by number and skipped', () => {
  it('keeps the good lines and reports each bad one with its 1-based line number', () => {
    const text = [
      '{"content":"Fed raises rates","urgency":"breaking"}',
      'not json',
      '',
      '{"urgency":"flash"}',
      '{"content":"ok","tickers":["aapl",{"ticker":"MSFT","sentiment":"negative"}]}',
      '{"content":"x","urgency":"soon"}',
      '{"content":"x","colour":"red"}',
    ].join('\n');
    const r = parseNdjson(text);
    expect(r.lines).toBe(6);
    expect(r.articles.map((a) => a.content)).toEqual(['Fed raises rates', 'ok']);
    expect(r.errors.map((e) => e.line)).toEqual([2, 4, 6, 7]);
    expect(r.errors[1]!.error).toBe('content is required and must be a non-empty string');
    expect(r.errors[2]!.error).toBe('urgency must be one of breaking, flash, regular');
    expect(r.articles[1]!.tickers).toEqual([
      { ticker: 'AAPL', sentiment: 'neutral', relevance: 1 },
      { ticker: 'MSFT', sentiment: 'negative', relevance: 1 },
    ]);
  });
  it('rejects a publication time without an offset, a bad ticker and over-long content', () => {
    expect(parseArticle({ content: 'x', published_at: '2026-11-21T10:00:00' })).toEqual({
      ok: false,
      error: 'published_at must be a real RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
    });
    expect(parseArticle({ content: 'x', tickers: ['not a ticker'] }).ok).toBe(false);
    expect(parseArticle({ content: 'x'.repeat(20001) }).ok).toBe(false);
  });
  it.each([
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '2026-11-31T10:00:00Z',
    '2026-11-21T25:00:00Z',
    '2026-11-21T10:00:00+25:00',
  ])('rejects an impossible publication time (%s) instead of rolling it over', (published_at) => {
    expect(parseArticle({ content: 'x', published_at }).ok).toBe(false);
  });
  it('refuses a NUL character in content, source or url (no store can keep it as text)', () => {
    expect(parseArticle({ content: 'a\u0000b' })).toEqual({
      ok: false,
      error: 'content must not contain a NUL character',
    });
    expect(parseArticle({ content: 'ok', url: 'http://x/\u0000' })).toEqual({
      ok: false,
      error: 'url must not contain a NUL character',
    });
  });
  it('accepts a real publication time, a leap day included, and keeps it in UTC', () => {
    expect(parseArticle({ content: 'x', published_at: '2028-02-29T10:00:00-05:00' })).toMatchObject({
      ok: true,
      article: { published_at: '2028-02-29T15:00:00.000Z' },
    });
  });
  it('keeps given fields over derived ones, including an explicit null sentiment', () => {
    const r = parseArticle({ content: 'Apple shares surge', sentiment: null, tickers: [], urgency: 'regular' });
    expect(r).toMatchObject({ ok: true, article: { sentiment: null, tickers: [], urgency: 'regular' } });
  });
});

describe('derivation when a line leaves a field out', () => {
  it('reads urgency from the headline flag', () => {
    expect(enrich('BREAKING: Fed hikes').urgency).toBe('breaking');
    expect(enrich('FLASH: oil jumps').urgency).toBe('flash');
    expect(enrich('Oil jumps').urgency).toBe('regular');
  });
  it('reads sentiment from a finance lexicon (src/enrich), neutral when nothing leans either way', () => {
    expect(enrich('Fed raises interest rates').sentiment).toBe('hawkish');
    expect(enrich('ECB cuts rates to support growth').sentiment).toBe('dovish');
    expect(enrich('Nvidia beats estimates').sentiment).toBe('positive');
    expect(enrich('Shares plunge after profit warning').sentiment).toBe('negative');
    expect(enrich('Company holds annual meeting').sentiment).toBe('neutral');
  });
  it('finds tickers from cashtags and company names most relevant first, with a per-ticker label', () => {
    expect(enrich('Apple and $MSFT rally').tickers).toEqual([
      { ticker: 'AAPL', sentiment: 'positive', relevance: 1 },
      { ticker: 'MSFT', sentiment: 'positive', relevance: 0.8 },
    ]);
    expect(enrich('Quiet day in markets').tickers).toEqual([]);
  });
});

describe('a ticker object with a field it does not know is refused by name, as a line is', () => {
  it('`relevanse` is an error naming it, never a ticker read without its relevance (it became 1)', () => {
    expect(
      parseArticle({
        content: 'Apple rallies on iPhone demand',
        tickers: [{ ticker: 'AAPL', sentiment: 'positive', relevanse: 0.2 }],
      }),
    ).toEqual({ ok: false, error: 'ticker "AAPL": unknown field(s): relevanse' });
    expect(
      parseArticle(
        JSON.parse('{"content":"Tesla slides","tickers":[{"ticker":"TSLA","sentiment":"negative","__proto__":{}}]}'),
      ),
    ).toEqual({ ok: false, error: 'ticker "TSLA": unknown field(s): __proto__' });
    expect(
      parseArticle({ content: 'x', tickers: ['aapl', { ticker: 'MSFT', sentiment: 'negative', relevance: 0.4 }] }),
    ).toMatchObject({ ok: true });
  });
});

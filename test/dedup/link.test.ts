/** Canonical links (src/dedup/link.ts): one describe per rule, on spellings seen in real feeds. */
import { describe, expect, it } from 'vitest';
import { canonicalLink, redirectTarget } from '../../src/dedup/link.js';

const same = (a: string, b: string) => expect(canonicalLink(a)).toBe(canonicalLink(b));

describe('only absolute http(s) links have a canonical form', () => {
  it('answers null for other schemes, relative links and garbage', () => {
    for (const l of [
      'ftp://example.com/a',
      'mailto:desk@example.com',
      '/markets/story',
      'not a link',
      '',
      'javascript:alert(1)',
    ]) {
      expect(canonicalLink(l)).toBeNull();
    }
  });
  it('keeps http and https apart (they may be different sites) and keeps www.', () => {
    expect(canonicalLink('http://www.example.com/a')).toBe('http://www.example.com/a');
    expect(canonicalLink('https://www.example.com/a')).toBe('https://www.example.com/a');
    expect(canonicalLink('https://example.com/a')).not.toBe(canonicalLink('https://www.example.com/a'));
  });
});

describe('scheme and host case, default ports, user info and fragments do not make another page', () => {
  it('a host in capitals with an explicit default port is the same page', () => {
    same(
      'HTTPS://WWW.Reuters.COM:443/markets/us/fed-raises-rates-2026-11-21/',
      'https://www.reuters.com/markets/us/fed-raises-rates-2026-11-21/',
    );
    same('http://Example.COM:80/news/1', 'http://example.com/news/1');
  });
  it('a non-default port is kept', () => {
    expect(canonicalLink('https://example.com:8443/a')).toBe('https://example.com:8443/a');
  });
  it('a fragment, a trailing dot on the host and user info are dropped', () => {
    expect(canonicalLink('https://user:pw@www.cnbc.com./2026/11/21/nvidia-earnings.html#comments')).toBe(
      'https://www.cnbc.com/2026/11/21/nvidia-earnings.html',
    );
  });
  it('the path keeps its case (paths are case-sensitive); percent escapes compare in any case', () => {
    expect(canonicalLink('https://example.com/News/A')).toBe('https://example.com/News/A');
    same('https://example.com/a%2fb', 'https://example.com/a%2Fb');
  });
});

describe('a trailing slash of the path is no other page', () => {
  it('drops it, keeping the root', () => {
    same('https://www.ft.com/content/0a1b2c3d/', 'https://www.ft.com/content/0a1b2c3d');
    expect(canonicalLink('https://www.ft.com/')).toBe('https://www.ft.com/');
    expect(canonicalLink('https://www.ft.com')).toBe('https://www.ft.com/');
  });
});

describe('tracking parameters are removed (utm_*, fbclid, gclid, mc_cid, mc_eid, ocid, cmpid, …)', () => {
  it('removes every documented tracker and keeps the parameters that choose the page, sorted', () => {
    expect(
      canonicalLink(
        'https://www.cnbc.com/2026/11/21/story.html?utm_source=rss&utm_medium=feed&__source=newsletter&fbclid=IwAR0x&id=7&gclid=abc&mc_cid=1&mc_eid=2&ocid=msn&cmpid=rss&a=1',
      ),
    ).toBe('https://www.cnbc.com/2026/11/21/story.html?__source=newsletter&a=1&id=7');
    same(
      'https://finance.yahoo.com/news/fed-raises-rates-143000123.html?guccounter=1&guce_referrer=aHR0cHM',
      'https://finance.yahoo.com/news/fed-raises-rates-143000123.html',
    );
    same(
      'https://www.marketwatch.com/story/x?mod=rss&UTM_Campaign=Daily',
      'https://www.marketwatch.com/story/x?mod=rss',
    );
  });
  it('an empty query is no query', () => {
    expect(canonicalLink('https://example.com/a?')).toBe('https://example.com/a');
    expect(canonicalLink('https://example.com/a?utm_source=x')).toBe('https://example.com/a');
  });
});

describe('AMP spellings are the publisher page', () => {
  const page = 'https://www.example.com/markets/2026/11/21/fed-raises-rates';
  it('a trailing /amp or /amp/ segment', () => {
    same(`${page}/amp`, page);
    same(`${page}/amp/`, page);
  });
  it('a leading /amp/ segment', () => {
    same('https://www.bbc.example/amp/news/business-67512345', 'https://www.bbc.example/news/business-67512345');
  });
  it('?outputType=amp and ?amp=1 (other outputType values are kept)', () => {
    same(
      'https://www.cnn.example/2026/11/21/markets/fed/index.html?outputType=amp',
      'https://www.cnn.example/2026/11/21/markets/fed/index.html',
    );
    same(`${page}?amp=1`, page);
    same(`${page}?amp`, page);
    expect(canonicalLink(`${page}?outputType=print`)).toBe(`${page}?outputType=print`);
  });
  it('an amp. host with the same path', () => {
    same(
      'https://amp.theguardian.example/business/2026/nov/21/fed-raises-rates',
      'https://theguardian.example/business/2026/nov/21/fed-raises-rates',
    );
  });
  it('a .amp or .amp.html ending', () => {
    same('https://www.example.com/story-123.amp.html', 'https://www.example.com/story-123.html');
    same('https://www.example.com/story-123.amp', 'https://www.example.com/story-123');
  });
  it('a word that merely contains amp is kept', () => {
    expect(canonicalLink('https://www.example.com/news/ampere-computing-ipo')).toBe(
      'https://www.example.com/news/ampere-computing-ipo',
    );
    expect(canonicalLink('https://amp.example/story')).toBe('https://amp.example/story');
  });
});

describe('redirectors carrying their target are the target', () => {
  it('the Brazilian publisher redirector (…/rss091/*https://…) is its canonical link', () => {
    const canonical =
      'https://www1.folha.example.com.br/mercado/2026/11/dolar-fecha-em-alta-apos-decisao-do-copom.shtml';
    const redir = `https://redir.folha.example.com.br/redir/online/mercado/rss091/*${canonical}`;
    expect(redirectTarget(redir)).toBe(canonical);
    same(redir, canonical);
  });
  it('a percent-encoded target after the star', () => {
    same(
      'https://redir.example/r/*https%3A%2F%2Fwww.example.com%2Fa%2Fstory.shtml',
      'https://www.example.com/a/story.shtml',
    );
  });
  it('url=, u= and q= (Google) query parameters holding an absolute http(s) link', () => {
    const target = 'https://www.wsj.example/articles/fed-raises-rates-11700000000';
    same(`https://news.google.example/url?sa=t&url=${encodeURIComponent(target)}&ct=ga`, target);
    same(`https://l.facebook.example/l.php?u=${encodeURIComponent(`${target}?fbclid=x`)}&h=AT0`, target);
    same(`https://www.google.example/url?q=${encodeURIComponent(target)}&sa=U`, target);
  });
  it('a redirector inside a redirector', () => {
    const target = 'https://www.example.com/story';
    same(`https://t.example/?url=${encodeURIComponent(`https://r.example/redir/*${target}`)}`, target);
  });
  it('a parameter that does not hold an absolute http(s) link is an ordinary parameter', () => {
    expect(canonicalLink('https://example.com/search?q=fed+rates')).toBe('https://example.com/search?q=fed+rates');
    expect(canonicalLink('https://example.com/go?url=/internal/page')).toBe(
      'https://example.com/go?url=/internal/page',
    );
    expect(redirectTarget('https://example.com/a/*not-a-link')).toBeUndefined();
  });
});

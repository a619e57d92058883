import { describe, expect, it } from 'vitest';
import { canonicalUrl } from '../../../src/sources/feed/index.js';
import { resolveHttpUrl } from '../../../src/sources/feed/url.js';

describe('canonical URLs for exact deduplication', () => {
  it('lower-cases scheme and host, drops the default port and the fragment', () => {
    expect(canonicalUrl('HTTPS://News.Example.COM:443/Path/Story#comments')).toBe(
      'https://news.example.com/Path/Story',
    );
    expect(canonicalUrl('http://example.com:80/a')).toBe('http://example.com/a');
    expect(canonicalUrl('http://example.com:8080/a')).toBe('http://example.com:8080/a');
  });
  it('removes utm_* and the other tracking parameters, whatever their case', () => {
    expect(
      canonicalUrl(
        'https://x.example/a?utm_source=rss&UTM_Medium=feed&id=7&fbclid=1&gclid=2&mc_cid=3&mc_eid=4&msclkid=5',
      ),
    ).toBe('https://x.example/a?id=7');
  });
  it('sorts the remaining parameters and drops an empty query', () => {
    expect(canonicalUrl('https://x.example/a?b=2&a=1&c=')).toBe('https://x.example/a?a=1&b=2&c=');
    expect(canonicalUrl('https://x.example/a?utm_campaign=x')).toBe('https://x.example/a');
    expect(canonicalUrl('https://x.example/a?')).toBe('https://x.example/a');
  });
  it('gives two spellings of one story the same form', () => {
    const a = canonicalUrl('https://WWW.wire.example/s/1?id=9&ref=x&utm_source=tw#top');
    const b = canonicalUrl('https://www.wire.example./s/1?ref=x&id=9');
    expect(a).toBe(b);
  });
  it('keeps different stories apart (path case and meaningful parameters matter)', () => {
    expect(canonicalUrl('https://x.example/A?id=1')).not.toBe(canonicalUrl('https://x.example/a?id=1'));
    expect(canonicalUrl('https://x.example/a?id=1')).not.toBe(canonicalUrl('https://x.example/a?id=2'));
  });
  it('upper-cases percent escapes and does not re-encode', () => {
    expect(canonicalUrl('https://x.example/caf%c3%a9?q=a%2fb+c')).toBe('https://x.example/caf%C3%A9?q=a%2Fb+c');
  });
  it('is null for anything but an absolute http(s) URL', () => {
    expect(canonicalUrl('ftp://x.example/a')).toBeNull();
    expect(canonicalUrl('mailto:a@b.example')).toBeNull();
    expect(canonicalUrl('/relative/path')).toBeNull();
    expect(canonicalUrl('not a url')).toBeNull();
    expect(canonicalUrl('javascript:alert(1)')).toBeNull();
  });
});

describe('relative links are resolved', () => {
  it('against the base, keeping only http(s)', () => {
    expect(resolveHttpUrl('../b/c', 'https://x.example/a/feed/')).toBe('https://x.example/a/b/c');
    expect(resolveHttpUrl('//cdn.example/p', 'https://x.example/')).toBe('https://cdn.example/p');
    expect(resolveHttpUrl('javascript:alert(1)', 'https://x.example/')).toBeNull();
    expect(resolveHttpUrl('  ', 'https://x.example/')).toBeNull();
    expect(resolveHttpUrl('relative', null)).toBeNull();
  });
});

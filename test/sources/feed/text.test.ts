import { describe, expect, it } from 'vitest';
import { decodeEntities, stripTags, toPlainText } from '../../../src/sources/feed/text.js';

describe('HTML in titles and summaries is stored as plain text', () => {
  it('drops tags and keeps the words apart at block boundaries', () => {
    expect(toPlainText('<p>Fed <b>holds</b></p><p>rates</p>')).toBe('Fed holds rates');
    expect(toPlainText('one<br/>two<br>three')).toBe('one two three');
  });
  it('drops script and style with their content, and comments', () => {
    expect(toPlainText('a<script type="x">alert("<b>")</script>b<style>p{}</style>c<!-- hidden -->d')).toBe('a b cd');
  });
  it('keeps a lone "<" that is not markup', () => {
    expect(toPlainText('5 < 6 and 7 > 3')).toBe('5 < 6 and 7 > 3');
  });
  it('honours quoted ">" inside attribute values', () => {
    expect(toPlainText('<a title="x > y" href="/z">link</a> text')).toBe('link text');
  });
  it('unwraps CDATA left inside HTML', () => {
    expect(stripTags('x<![CDATA[<i>y</i>]]>z')).toBe('x<i>y</i>z');
  });
  it('collapses whitespace (non-breaking spaces included) and trims', () => {
    expect(toPlainText('  a \n\t b&nbsp;&nbsp;c  ')).toBe('a b c');
  });
  it('is null when nothing is left', () => {
    expect(toPlainText('  <p> </p> ')).toBeNull();
    expect(toPlainText(undefined)).toBeNull();
    expect(toPlainText(null)).toBeNull();
  });
  it('drops control characters', () => {
    expect(toPlainText('a\u0000b\u0007c\u0085d')).toBe('abcd');
  });
});

describe('character references are decoded', () => {
  it('decodes named, decimal and hexadecimal references', () => {
    expect(decodeEntities('AT&amp;T &ndash; &#8217;s &#x2014; &eacute;t&eacute; &euro;5 &copy;')).toBe(
      'AT&T – ’s — été €5 ©',
    );
  });
  it('reads numeric references 128–159 as Windows-1252, as browsers do', () => {
    expect(decodeEntities('it&#146;s &#147;ok&#148; &#128;')).toBe('it’s “ok” €');
  });
  it('decodes the whole HTML named set, not only HTML 4 (what publishers paste from web pages)', () => {
    expect(decodeEntities('&check; &rarrw; &NotEqual; &half; &dollar;5 &percnt; &apos;')).toBe("✓ ↝ ≠ ½ $5 % '");
  });
  it('leaves unknown names, bare ampersands and references without their `;` alone', () => {
    expect(decodeEntities('Q&A; R&D &bogus; &amp')).toBe('Q&A; R&D &bogus; &amp');
    expect(decodeEntities('&copy 2026, &#8217s &notit;')).toBe('&copy 2026, &#8217s &notit;');
  });
  it('replaces impossible code points', () => {
    expect(decodeEntities('&#0;&#xD800;&#x110000;')).toBe('\uFFFD\uFFFD\uFFFD');
  });
  it('decodes after stripping, so escaped markup in text survives as text once', () => {
    expect(toPlainText('&lt;b&gt; is bold')).toBe('<b> is bold');
  });
});

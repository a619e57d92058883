import { readFileSync } from 'node:fs';
import path from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import {
  charsetFromContentType,
  decodeFeedBytes,
  encodingFromXmlDeclaration,
} from '../../../src/sources/feed/charset.js';
import { FeedError } from '../../../src/sources/feed/errors.js';
import { FEED_FIXTURES } from '../fixture-server.js';

const fixture = (name: string): Uint8Array => readFileSync(path.join(FEED_FIXTURES, name));
const titleOf = (text: string): string => /<title>([^<]*)<\/title>/.exec(text)![1]!;

describe('the declared encoding is found', () => {
  it('reads the charset parameter of a Content-Type', () => {
    expect(charsetFromContentType('application/rss+xml; charset="ISO-8859-1"')).toBe('ISO-8859-1');
    expect(charsetFromContentType('text/xml;charset=gb2312')).toBe('gb2312');
    expect(charsetFromContentType('application/xml')).toBeNull();
    expect(charsetFromContentType(null)).toBeNull();
  });
  it('reads the encoding of an XML declaration', () => {
    expect(encodingFromXmlDeclaration(Buffer.from(`<?xml version='1.0' encoding='windows-1252'?><rss/>`))).toBe(
      'windows-1252',
    );
    expect(encodingFromXmlDeclaration(Buffer.from('<?xml version="1.0"?><rss/>'))).toBeNull();
    expect(encodingFromXmlDeclaration(Buffer.from('<rss encoding="x"/>'))).toBeNull();
  });
});

describe('bytes are decoded with the right charset', () => {
  it('ISO-8859-1 from the XML declaration', () => {
    expect(titleOf(decodeFeedBytes(fixture('latin1.xml')).text)).toBe('Zürich: Société Générale gains');
  });
  it('Windows-1252 from the XML declaration (curly quotes, euro)', () => {
    expect(titleOf(decodeFeedBytes(fixture('windows-1252.xml')).text)).toBe('“Quoted” – €5 bonus');
  });
  it('GB2312 from the XML declaration', () => {
    expect(titleOf(decodeFeedBytes(fixture('gb2312.xml')).text)).toBe('中国人民银行宣布降准');
  });
  it('the Content-Type charset over the XML declaration', () => {
    const bytes = iconv.encode('<?xml version="1.0" encoding="utf-8"?><rss><title>Ünï</title></rss>', 'latin1');
    expect(titleOf(decodeFeedBytes(bytes, 'text/xml; charset=iso-8859-1').text)).toBe('Ünï');
  });
  it('a byte order mark over both (UTF-8 and UTF-16)', () => {
    const utf8 = decodeFeedBytes(fixture('utf8-bom.xml'), 'text/xml; charset=iso-8859-1');
    expect(titleOf(utf8.text)).toBe('Bom “wins” ü');
    expect(utf8.text.startsWith('<?xml')).toBe(true);
    expect(titleOf(decodeFeedBytes(fixture('utf16le-bom.xml')).text)).toBe('Ünïcödé 16');
  });
  it('UTF-8 sent under a legacy declaration is read as UTF-8', () => {
    const d = decodeFeedBytes(fixture('utf8-declared-latin1.xml'));
    expect(titleOf(d.text)).toBe('Zürich – Nestlé “steady”');
    expect(d.encoding).toBe('utf-8');
  });
  it('Windows-1252 sent as (default) UTF-8 is read as Windows-1252', () => {
    const d = decodeFeedBytes(fixture('cp1252-undeclared.xml'), 'application/rss+xml; charset=utf-8');
    expect(titleOf(d.text)).toBe('Café “crème” €3');
    expect(d.encoding).toBe('windows-1252');
  });
  it('an unknown charset over non-UTF-8 bytes is a charset error', () => {
    expect(() => decodeFeedBytes(fixture('unknown-charset.xml'))).toThrow(FeedError);
    try {
      decodeFeedBytes(fixture('unknown-charset.xml'));
    } catch (err) {
      expect((err as FeedError).kind).toBe('charset');
    }
  });
  it('an unknown charset over plain ASCII is harmless', () => {
    expect(titleOf(decodeFeedBytes(Buffer.from('<rss><title>ok</title></rss>'), 'text/xml; charset=x-nope').text)).toBe(
      'ok',
    );
  });
});

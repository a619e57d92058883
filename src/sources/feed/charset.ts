import iconv from 'iconv-lite';
import { invalidUtf8Offset, lineOfOffset } from '../../ingest/utf8.js';
import { bounded, FeedError } from './errors.js';

/**
 * Feed bytes to text: a BOM wins, then the Content-Type charset, the XML declaration, UTF-8. Feeds lie, so a
 * legacy label over valid non-ASCII UTF-8 is read as UTF-8; UTF-8 over invalid bytes takes the other label,
 * else notUtf8Fallback; an undecodable charset is FeedError('charset'). Labels as WHATWG reads them
 * (ISO-8859-1/ASCII are Windows-1252, GB2312 is GBK).
 */

// Sets: the label is the feed's text (`charset=constructor` must not find an Object method).
const WINDOWS_1252_LABELS = new Set(
  'iso-8859-1 iso8859-1 iso_8859-1 latin1 l1 us-ascii ascii ansi_x3.4-1968 cp1252 x-cp1252'.split(' '),
);
const GBK_LABELS = new Set(['gb2312', 'x-gbk', 'csgb2312', 'gb_2312-80', 'euc-cn']);

function normalizeLabel(label: string): string {
  const l = label
    .trim()
    .replace(/^["']|["']$/g, '')
    .toLowerCase();
  if (WINDOWS_1252_LABELS.has(l)) return 'windows-1252';
  return GBK_LABELS.has(l) ? 'gbk' : l;
}

function isUtf8(label: string): boolean {
  return label === 'utf-8' || label === 'utf8' || label === 'unicode-1-1-utf-8';
}

/** The `charset` parameter of a Content-Type header, or null. */
export function charsetFromContentType(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  const m = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType);
  return m ? m[2]! : null;
}

/** The `encoding` of an XML declaration at the start of the bytes (ASCII-compatible encodings only), or null. */
export function encodingFromXmlDeclaration(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 512)).toString('latin1');
  const m = /^\s*<\?xml\s[^?>]*?encoding\s*=\s*(["'])([A-Za-z0-9._:-]+)\1/.exec(head);
  return m ? m[2]! : null;
}

function bomEncoding(bytes: Uint8Array): { encoding: string; length: number } | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  // UTF-16 without a BOM, recognisable by "<?" with zero bytes in between (XML 1.0 Appendix F).
  if (bytes[0] === 0x3c && bytes[1] === 0x00 && bytes[2] === 0x3f && bytes[3] === 0x00)
    return { encoding: 'utf-16le', length: 0 };
  if (bytes[0] === 0x00 && bytes[1] === 0x3c && bytes[2] === 0x00 && bytes[3] === 0x3f)
    return { encoding: 'utf-16be', length: 0 };
  return null;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function tryUtf8(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Whether the bytes hold at least one valid multi-byte UTF-8 sequence (text written as UTF-8). */
function hasUtf8Sequence(bytes: Uint8Array): boolean {
  for (let i = 0; i + 1 < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 0xc2 || b > 0xf4) continue;
    const len = b <= 0xdf ? 2 : b <= 0xef ? 3 : 4;
    if (i + len > bytes.length) continue;
    let ok = true;
    for (let k = 1; k < len; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) ok = false;
    if (ok && invalidUtf8Offset(bytes.subarray(i, i + len)) === -1) return true;
  }
  return false;
}

/**
 * Invalid "UTF-8" with no other label: without any UTF-8 sequence, a mislabelled Windows-1252 feed; with some,
 * corrupt UTF-8, refused naming the line (Windows-1252 would garble it, U+FFFD invent text: src/ingest/utf8.ts).
 */
function notUtf8Fallback(bytes: Uint8Array): string {
  if (hasUtf8Sequence(bytes)) {
    const offset = invalidUtf8Offset(bytes);
    const at = lineOfOffset(bytes, offset);
    throw new FeedError(
      'charset',
      `the feed is UTF-8 but not valid UTF-8: byte 0x${bytes[offset]!.toString(16).padStart(2, '0')} at line ${at.line}, byte ${at.column} of that line; nothing was read from this poll`,
    );
  }
  return iconv.decode(bytes, 'windows-1252');
}

export interface Decoded {
  text: string;
  /** Normalized label. */
  encoding: string;
  /** The encoding the response or document declared, when it differs from the one used. */
  declared: string | null;
}

export function decodeFeedBytes(bytes: Uint8Array, contentType?: string | null): Decoded {
  const bom = bomEncoding(bytes);
  if (bom) {
    const body = bytes.subarray(bom.length);
    const text =
      bom.encoding === 'utf-8'
        ? (tryUtf8(body) ?? notUtf8Fallback(body))
        : iconv.decode(body, bom.encoding, { stripBOM: true });
    return { text, encoding: bom.encoding, declared: null };
  }
  const labels = [charsetFromContentType(contentType), encodingFromXmlDeclaration(bytes)]
    .filter((l): l is string => l !== null)
    .map(normalizeLabel);
  const declared = labels[0] ?? 'utf-8';
  // Multi-byte UTF-16/32 labels over ASCII-compatible bytes are wrong by construction (a BOM or zero bytes would show).
  const usable = labels.filter((l) => !/^(utf-?16|utf-?32|ucs-?2)/.test(l));
  const first = usable[0] ?? 'utf-8';

  const utf8 = tryUtf8(bytes);
  if (isUtf8(first)) {
    if (utf8 !== null) return { text: utf8, encoding: 'utf-8', declared: declared === 'utf-8' ? null : declared };
    const other = usable.find((l) => !isUtf8(l) && iconv.encodingExists(l));
    if (other !== undefined) return { text: iconv.decode(bytes, other), encoding: other, declared };
    return { text: notUtf8Fallback(bytes), encoding: 'windows-1252', declared };
  }
  // Valid UTF-8 with non-ASCII text is read as UTF-8 whatever legacy label it carries (feeds lie), as is an unknown one.
  if (utf8 !== null && (/[\u0080-\uffff]/.test(utf8) || !iconv.encodingExists(first))) {
    return { text: utf8, encoding: 'utf-8', declared };
  }
  const known = usable.find((l) => iconv.encodingExists(l));
  if (known === undefined) throw new FeedError('charset', `unsupported charset "${bounded(first, 40)}"`);
  return { text: iconv.decode(bytes, known), encoding: known, declared: known === declared ? null : declared };
}

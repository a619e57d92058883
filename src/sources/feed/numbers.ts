/**
 * Numbers a feed writes, read from the document's own text (the parser's `+text` reads hex and exponents):
 * decimal digits only, so `0x10`, `1e3`, `-5` or `１０` are ignored, never guessed; then clamped.
 */
import { tagEnd } from './text.js';

/** `text` as a whole number in [min, max] (larger is max); null when absent, not decimal digits, or below min. */
export function readDecimal(text: string | null | undefined, min: number, max: number): number | null {
  if (typeof text !== 'string') return null;
  const m = /^[ \t\r\n]*(\d+)[ \t\r\n]*$/.exec(text);
  if (!m) return null;
  const digits = m[1]!.replace(/^0+(?=\d)/, '');
  const n = digits.length > 15 ? Number.POSITIVE_INFINITY : Number(digits);
  if (n < min) return null;
  return Math.min(n, max);
}

/** Lower-case local name (no prefix) of the tag whose name starts at i. */
function localName(s: string, i: number): string {
  let j = i;
  while (j < s.length && !/[\s/>]/.test(s[j]!)) j++;
  const name = s.slice(i, j).toLowerCase();
  const colon = name.lastIndexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** Children of the feed itself: `<rss><channel>`, `<rdf:RDF><channel>` or Atom's `<feed>`. */
function atFeedLevel(stack: readonly string[]): boolean {
  return (stack.length === 2 && stack[0] === 'feed') || (stack.length === 3 && stack[1] === 'channel');
}

/** The first feed-level element's text per `wanted` local name (lower case), in one linear pass; items are skipped. */
export function feedLevelTexts(xml: string, wanted: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  const stack: string[] = [];
  let capture: { name: string; depth: number; text: string } | null = null;
  let i = 0;
  while (i < xml.length && found.size < wanted.size) {
    const lt = xml.indexOf('<', i);
    if (lt === -1) break;
    if (capture) capture.text += xml.slice(i, lt);
    if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt + 4);
      if (end === -1) break;
      i = end + 3;
    } else if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt + 9);
      if (end === -1) break;
      if (capture) capture.text += xml.slice(lt + 9, end);
      i = end + 3;
    } else if (xml.startsWith('<?', lt)) {
      const end = xml.indexOf('?>', lt + 2);
      if (end === -1) break;
      i = end + 2;
    } else if (xml.startsWith('<!', lt)) {
      // A DOCTYPE, possibly with an internal subset in brackets.
      const gt = xml.indexOf('>', lt);
      const bracket = xml.indexOf('[', lt);
      if (gt === -1) break;
      if (bracket !== -1 && bracket < gt) {
        const close = xml.indexOf(']', bracket);
        const after = close === -1 ? -1 : xml.indexOf('>', close);
        if (after === -1) break;
        i = after + 1;
      } else i = gt + 1;
    } else {
      const end = tagEnd(xml, lt);
      if (end === -1) break;
      if (xml[lt + 1] === '/') {
        if (capture && stack.length === capture.depth) {
          found.set(capture.name, capture.text);
          capture = null;
        }
        stack.pop();
      } else if (xml[end - 2] !== '/') {
        const name = localName(xml, lt + 1);
        stack.push(name);
        if (!capture && wanted.has(name) && !found.has(name) && atFeedLevel(stack))
          capture = { name, depth: stack.length, text: '' };
      }
      i = end;
    }
  }
  return found;
}

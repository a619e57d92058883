import { parseRfc3339, utcDateTime } from '../../domain/time.js';

/**
 * Feed dates, RFC 822/2822 (`pubDate`) and RFC 3339/W3CDTF (`dc:date`, Atom, JSON Feed), to epoch ms. Nothing
 * is guessed: without a time of day or a zone, or an impossible calendar date, a date is unreadable.
 */

const MONTH_NAMES = 'january february march april may june july august september october november december'.split(' ');

/** 1-12 for a month's full name, its first three letters or `sept` (any case); otherwise undefined. */
function monthOf(name: string): number | undefined {
  const n = name.toLowerCase();
  if (n === 'sept') return 9;
  const i = MONTH_NAMES.findIndex((full) => full === n || full.slice(0, 3) === n);
  return i === -1 ? undefined : i + 1;
}

/** RFC 822 §5 zone names, in minutes east of UTC (a Map: the key is the feed's text). */
const ZONES = new Map<string, number>([
  ['UT', 0],
  ['UTC', 0],
  ['GMT', 0],
  ['Z', 0],
  ['EST', -300],
  ['EDT', -240],
  ['CST', -360],
  ['CDT', -300],
  ['MST', -420],
  ['MDT', -360],
  ['PST', -480],
  ['PDT', -420],
]);

/** Offset in minutes; military zones (A–I, K–Y) are UTC per RFC 2822 §4.3 (RFC 822 gave them inverted signs). */
function zoneOffsetMinutes(zone: string): number | undefined {
  const z = zone.toUpperCase();
  const named = ZONES.get(z);
  if (named !== undefined) return named;
  if (/^[A-IK-Y]$/.test(z)) return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (!m) return undefined;
  const h = Number(m[2]);
  const min = Number(m[3]);
  if (h > 23 || min > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (h * 60 + min);
}

/** Epoch ms of a UTC date-time, or undefined for an impossible one; a leap second (:60) is the next second. */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number) {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  if (year < 1000 || day < 1 || day > days || hour > 23 || minute > 59 || second > 60) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59)) + (second === 60 ? 1000 : 0);
}

// [day-name ","] day month year hour ":" minute [":" second] zone; lenient about spacing, full day/month
// names, a missing comma, a fractional second and a parenthesised comment after the zone.
const RFC822 =
  /^(?:[A-Za-z]{3,9},?\s*)?(\d{1,2})[\s-]+([A-Za-z]{3,9})\.?[\s-]+(\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*([A-Za-z]{1,5}|[+-]\d{2}:?\d{2})?(?:\s*\([^)]*\))?$/;

/** Epoch milliseconds of an RFC 822 date-time, or undefined. Two-digit years follow RFC 2822 (00–49 → 20xx). */
export function parseRfc822(raw: string): number | undefined {
  const m = RFC822.exec(raw.trim());
  if (!m) return undefined;
  const month = monthOf(m[2]!);
  // Without a zone the instant is unknown.
  const offset = m[7] === undefined ? undefined : zoneOffsetMinutes(m[7]);
  if (month === undefined || offset === undefined) return undefined;
  let year = Number(m[3]);
  if (m[3]!.length === 2) year += year < 50 ? 2000 : 1900;
  const ms = utcMs(year, month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  return ms === undefined ? undefined : ms - offset * 60_000;
}

const ASCTIME = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Za-z]{3}) ( \d|\d{2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/** Epoch ms of an asctime() date (`Sun Nov  6 08:49:37 1994`, UTC; RFC 9110 §5.6.7, for Retry-After), or undefined. */
export function parseAsctime(raw: string): number | undefined {
  const m = ASCTIME.exec(raw.trim());
  const month = m ? monthOf(m[1]!) : undefined;
  if (!m || month === undefined) return undefined;
  return utcMs(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]));
}

/** Epoch ms of RFC 3339 / W3CDTF: src/domain/time.ts's strict reader, also taking a space for `T` or no seconds. */
export function parseIsoDate(raw: string): number | undefined {
  const s = raw.trim();
  const direct = parseRfc3339(s);
  if (direct !== undefined) return direct;
  const m = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?\s*([Zz]|[+-]\d{2}:?\d{2})$/.exec(s);
  if (!m) return undefined;
  const zone = m[4]!.length === 5 ? `${m[4]!.slice(0, 3)}:${m[4]!.slice(3)}` : m[4]!;
  return parseRfc3339(`${m[1]}T${m[2]}${m[3] ?? ':00'}${zone}`);
}

/** A feed date in either family, as RFC 3339 UTC with milliseconds, or null when unreadable. */
export function feedDate(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  const s = raw.trim();
  if (s === '') return null;
  const ms = /^\d{4}-/.test(s) ? parseIsoDate(s) : parseRfc822(s);
  // As a pushed or ingested published_at is stored (src/domain/time.ts); a year past 0001-9999 in UTC is unreadable.
  return ms === undefined ? null : (utcDateTime(ms) ?? null);
}

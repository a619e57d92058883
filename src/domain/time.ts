/**
 * RFC 3339 read strictly: a real date (no 30 February), hours 00–23, minutes 00–59, seconds 00–60 (`:60` is read as
 * the next second), offset at most ±23:59. Anything else is undefined, never rolled over into another date.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** Epoch milliseconds of an RFC 3339 date-time with an offset, or undefined when it is not one. */
export function parseRfc3339(raw: string): number | undefined {
  const m = RFC3339.exec(raw);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, Math.min(second, 59), Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)));
  return d.getTime() + (second === 60 ? 1000 : 0) - offsetMinutes * 60_000;
}

/** The instants a date-time written in UTC can name with four-digit years: 0001-01-01 to 9999-12-31. */
const FIRST_INSTANT_MS = new Date(0).setUTCFullYear(1, 0, 1);
const LAST_INSTANT_MS = new Date(0).setUTCFullYear(9999, 11, 31) + 86_400_000 - 1;

/** An instant as stored (`2026-11-21T10:00:00.000Z`, like `received_at`); undefined outside the years 0001-9999. */
export function utcDateTime(ms: number): string | undefined {
  if (!Number.isFinite(ms) || ms < FIRST_INSTANT_MS || ms > LAST_INSTANT_MS) return undefined;
  return new Date(ms).toISOString();
}

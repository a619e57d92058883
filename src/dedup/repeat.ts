/**
 * Repeat keys: one source's same headline and published time under another id or link is the same item. An
 * undated key is matched only within the near-duplicate window: "Wall Street opens higher" tomorrow is news.
 */
import { createHash } from 'node:crypto';

/** Prefixes of repeat keys (stored beside the items' own ids, per source): dated and undated. */
export const REPEAT_KEY_DATED = 'headline:';
export const REPEAT_KEY_UNDATED = 'headline-undated:';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A sign, currency or comparison that opens a figure (`+2%`, `$5m`, `<1.10`); the minus and en dash read as `-`. */
const FIGURE_PREFIX = /^[+\-\u2212\u2013$€£¥<>=]+$/;

/**
 * A headline as repeats are compared: NFKC, lower case, punctuation and symbols as spaces, except between two digits
 * (`1.5`, `5,000`) and a sign, currency or comparison opening a figure (`+2%` is not `-2%`; `COVID-19` is `covid 19`);
 * any other word differs.
 */
export function repeatHeadline(content: string): string {
  return content
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, (run, at: number, text: string) => {
      if (!/\d/.test(text[at + run.length] ?? '')) return ' ';
      const before = text[at - 1] ?? '';
      if (/\d/.test(before)) return run;
      return FIGURE_PREFIX.test(run) && !/[\p{L}\p{N}]/u.test(before) ? run.replace(/[\u2212\u2013]/g, '-') : ' ';
    })
    .replace(/\s+/g, ' ')
    .trim();
}

/** The repeat key of an item of one source: its headline and published time (as an instant), or undated. */
export function repeatKey(content: string, publishedAt: string | null): string {
  const headline = repeatHeadline(content);
  if (publishedAt === null) return `${REPEAT_KEY_UNDATED}${sha256(headline)}`;
  const ms = Date.parse(publishedAt);
  const when = Number.isNaN(ms) ? publishedAt : new Date(ms).toISOString();
  return `${REPEAT_KEY_DATED}${sha256(`${headline}\n${when}`)}`;
}

export const isUndatedRepeatKey = (key: string) => key.startsWith(REPEAT_KEY_UNDATED);

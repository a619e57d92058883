/**
 * Repeat keys: the same source repeating the same headline (normalised by `repeatHeadline`) with the
 * same published time under another id or link is the same item. An item without a published time has
 * an undated key, which the store matches only within the near-duplicate window: a wire's recurring
 * headline ("Wall Street opens higher") on another day is a new story. Pure.
 */
import { createHash } from 'node:crypto';

/** Prefixes of repeat keys (stored beside the items' own ids, per source): dated and undated. */
export const REPEAT_KEY_DATED = 'headline:';
export const REPEAT_KEY_UNDATED = 'headline-undated:';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * A headline as repeats are compared: compatibility forms folded (NFKC), lower case, punctuation and
 * symbols that are not inside a number turned into spaces, runs of spaces collapsed. Exact otherwise:
 * a different word is a different headline (an update of a story keeps its id or link instead).
 */
export function repeatHeadline(content: string): string {
  return content
    .normalize('NFKC')
    .toLowerCase()
    .replace(/(?<!\d)[\p{P}\p{S}]+|[\p{P}\p{S}]+(?!\d)/gu, ' ')
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

/**
 * Urgency of an item: the source's setting when it names one, else the `auto` rules below, applied to
 * the start of the headline (leading whitespace, `*`, `>`, `#` and brackets ignored where noted).
 *
 * `auto` rules, first match wins:
 *  1. breaking — the headline starts with `BREAKING`, `BREAKING NEWS`, `URGENT` or `ALERT` (any case)
 *     followed by `:`, `-`, `–`, `—` or `|`, or written in capitals followed by a space
 *     (`BREAKING Fed hikes`); optional leading `*`s and brackets (`[BREAKING]`, `** Breaking:`).
 *  2. flash — the headline starts with `FLASH` / `NEWSFLASH` the same way, or with a `*` (the wire
 *     flash convention: `*FED RAISES RATES BY 25BPS`), or is a short all-capitals wire headline
 *     (at least 4 words, at most 160 characters, no lower-case letter: `ECB CUTS DEPOSIT RATE TO 2%`).
 *  3. regular — everything else.
 */
import type { Urgency } from '../contract/index.js';

export type UrgencySetting = 'auto' | Urgency;

const SEP = String.raw`\s*[:\-–—|]`;
const LEAD = String.raw`^[\s>#]*(?:\*+\s*)?[\[(]?\s*`;
// The capitals-only alternative must stay case-sensitive: `Breaking ground` is not a flag.
const BREAKING_CAPS = new RegExp(`${LEAD}(?:BREAKING(?: NEWS)?|URGENT|ALERT)[\\])]?\\s`);
const BREAKING_SEP = new RegExp(`${LEAD}(?:breaking(?:\\s+news)?|urgent|alert)\\s*[\\])]?${SEP}`, 'i');
const FLASH_SEP = new RegExp(`${LEAD}(?:news)?flash\\s*[\\])]?${SEP}`, 'i');
const FLASH_CAPS = new RegExp(`${LEAD}(?:NEWS)?FLASH[\\])]?\\s`);
const STAR = /^\s*\*/;

function isCapitalsWire(text: string): boolean {
  const t = text.trim();
  if (t.length > 160 || /\p{Ll}/u.test(t)) return false;
  const words = t.split(/\s+/).filter((w) => /\p{Lu}/u.test(w));
  return words.length >= 4;
}

/** The urgency the `auto` rules read from a headline. */
function autoUrgency(content: string): Urgency {
  if (BREAKING_SEP.test(content) || BREAKING_CAPS.test(content)) return 'breaking';
  if (FLASH_SEP.test(content) || FLASH_CAPS.test(content) || STAR.test(content) || isCapitalsWire(content))
    return 'flash';
  return 'regular';
}

/** The source's setting wins; `auto` (or none) applies the rules. */
export function urgencyFor(content: string, setting: UrgencySetting = 'auto'): Urgency {
  return setting === 'auto' ? autoUrgency(content) : setting;
}

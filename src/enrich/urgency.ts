/**
 * Urgency: the source's setting, else the `auto` rules on the headline's start, first match wins:
 *  1. breaking: `BREAKING`, `BREAKING NEWS`, `URGENT`, `ALERT` (any case) then `:` `-` `–` `—` `|`, or in capitals
 *     then a space (`BREAKING Fed hikes`); leading `*`s and brackets allowed (`[BREAKING]`, `** Breaking:`);
 *  2. flash: `FLASH` / `NEWSFLASH` the same way, a leading `*` (wire convention: `*FED RAISES RATES`), or an
 *     all-capitals headline of 4+ words and at most 160 characters;
 *  3. regular.
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

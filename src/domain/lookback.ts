/** The lookback window of the list endpoint (spec §4.1 rules 1-3). */
import type { Tier } from '../contract/index.js';
import { planOf } from './tiers.js';

/**
 * The exclusive lower bound on `received_at` for a list request: the later of `since` and the start of
 * the tier's lookback window. An older `since` is clamped silently; no `since` means the window itself.
 */
export function effectiveSince(tier: Tier, now: number, since: number | undefined): number {
  const windowStart = now - planOf(tier).lookbackHours * 3600 * 1000;
  return since === undefined ? windowStart : Math.max(since, windowStart);
}

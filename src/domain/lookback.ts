/** The lookback window of the list endpoint (spec §4.1 rules 1-3). */
import type { Tier } from '../contract/index.js';
import { planOf } from './tiers.js';

/** Exclusive lower bound on `received_at`: the later of `since` and the tier's window start (clamped silently). */
export function effectiveSince(tier: Tier, now: number, since: number | undefined): number {
  const windowStart = now - planOf(tier).lookbackHours * 3600 * 1000;
  return since === undefined ? windowStart : Math.max(since, windowStart);
}

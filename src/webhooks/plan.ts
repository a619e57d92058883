/** Whether an endpoint may be delivered on its account's plan: the stream's rules, applied to a webhook. Pure. */
import type { Tier } from '../contract/index.js';
import { planOf } from '../domain/tiers.js';

/** Why the plan forbids delivery (null: it may). A ticker filter off max pauses the endpoint, never dropped. */
export function pauseForPlan(tier: Tier, tickers: readonly string[] | null): string | null {
  if (!planOf(tier).stream) return `the account's plan (${tier}) does not include webhooks (pro or max only)`;
  if (tickers !== null && !planOf(tier).tickers) {
    return `the account's plan (${tier}) does not include ticker filters (max only); the filter ${tickers.join(',')} is kept and nothing is sent unfiltered (fns webhooks resume once the account is on max, or add an endpoint without --tickers)`;
  }
  return null;
}

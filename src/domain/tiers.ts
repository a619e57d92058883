/** Subscription states (spec §3; openapi.yaml Usage): pure functions of the account record and the clock. */
import { limits, plans, type Plan, type Tier, type Usage } from '../contract/index.js';

/** What the store keeps for an account. `tier` is the plan last set; cancellation is a timestamp. */
export interface AccountRecord {
  id: string;
  tier: Tier;
  periodEnd: string | null;
  cancelledAt: string | null;
}

/** The tier in force at `now`: cancelled accounts are `expired` for the grace window, then `free`. */
export function effectiveTier(account: AccountRecord, now: number): Tier {
  if (account.cancelledAt !== null) {
    return now < Date.parse(account.cancelledAt) + limits.graceWindowMs ? 'expired' : 'free';
  }
  return account.tier;
}

export function planOf(tier: Tier): Plan {
  return plans[tier];
}

/** The usage record of spec §2.3: `period_end` only for an active paid plan. */
export function usageOf(account: AccountRecord, now: number): Usage {
  const tier = effectiveTier(account, now);
  const plan = plans[tier];
  return { tier, rate_limit: plan.rateLimit, period_end: plan.paid ? account.periodEnd : null };
}

/** A tier with no API access at all (`free`: rate limit 0). */
export function isBlocked(tier: Tier): boolean {
  return plans[tier].rateLimit === 0;
}

/** End of a billing period that starts at `now`: one calendar month later (UTC). */
export function nextPeriodEnd(now: number): string {
  const d = new Date(now);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  target.setUTCHours(d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), 0);
  return toIso(target.getTime());
}

/** RFC 3339 in UTC with `Z`; milliseconds only when present. */
export function toIso(ms: number): string {
  const s = new Date(ms).toISOString();
  return s.endsWith('.000Z') ? s.replace('.000Z', 'Z') : s;
}

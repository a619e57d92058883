/** The retry schedule of openapi.yaml `x-webhook-rules`: delays ±jitter until the give-up window, then paused. Pure. */
import { webhookRules } from '../contract/index.js';

export interface RetryRules {
  scheduleMs: readonly number[];
  everyMs: number;
  jitterRatio: number;
  giveUpAfterMs: number;
}

export const CONTRACT_RETRY_RULES: RetryRules = {
  scheduleMs: webhookRules.retryScheduleMs,
  everyMs: webhookRules.retryEveryMs,
  jitterRatio: webhookRules.jitterRatio,
  giveUpAfterMs: webhookRules.giveUpAfterMs,
};

export type RetryDecision = { retry: true; at: number } | { retry: false; reason: string };

/** The delay before attempt `failures + 1`, without jitter (`failures` ≥ 1). */
export function baseDelay(failures: number, rules: RetryRules = CONTRACT_RETRY_RULES): number {
  return rules.scheduleMs[failures - 1] ?? rules.everyMs;
}

/** After the `failures`-th failure in a row: when to retry, or give up past the window. `random` in [0, 1). */
export function nextRetry(
  failures: number,
  firstFailureAt: number,
  now: number,
  random: () => number,
  rules: RetryRules = CONTRACT_RETRY_RULES,
): RetryDecision {
  if (now - firstFailureAt >= rules.giveUpAfterMs) {
    const hours = Math.round(rules.giveUpAfterMs / 3_600_000);
    return {
      retry: false,
      reason: `failing since ${new Date(firstFailureAt).toISOString()} (${failures} attempts over ${hours} h)`,
    };
  }
  const base = baseDelay(failures, rules);
  const jitter = base * rules.jitterRatio * (2 * random() - 1);
  return { retry: true, at: now + Math.max(0, Math.round(base + jitter)) };
}

/** Exact sliding-window rate limit (openapi.yaml "Rate limits"): at most `limit` admissions in any `windowMs`. */
export interface RateDecision {
  admitted: boolean;
  limit: number;
  /** Requests still admissible right after this decision. */
  remaining: number;
  /**
   * Epoch ms when one more request is admitted: the oldest logged request leaves the window, or, with more logged
   * than the limit (after a downgrade), the one whose leaving brings the count below it (now, when the log is empty).
   */
  resetAt: number;
  /** Whole seconds until the next request would be admitted (0 when admitted). */
  retryAfterSeconds: number;
}

/** Decides one request on `log` (admission times, ascending); the new log keeps the window, plus `now` if admitted. */
export function admit(
  log: readonly number[],
  now: number,
  limit: number,
  windowMs: number,
): { decision: RateDecision; log: number[] } {
  const live = log.filter((t) => t > now - windowMs);
  const admitted = live.length < limit;
  if (admitted) live.push(now);
  const first = live[Math.max(0, live.length - Math.max(limit, 1))];
  const resetAt = first === undefined ? now : first + windowMs;
  // When refused, the next admission is when enough old entries have left for one free slot.
  const freeAt = admitted ? now : (live[live.length - limit] ?? now) + windowMs;
  return {
    log: live,
    decision: {
      admitted,
      limit,
      remaining: Math.max(0, limit - live.length),
      resetAt,
      retryAfterSeconds: admitted ? 0 : Math.max(1, Math.ceil((freeAt - now) / 1000)),
    },
  };
}

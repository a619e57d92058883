/**
 * The fields of draft-ietf-httpapi-ratelimit-headers (-10/-11), beside `X-RateLimit-*` on every counted answer:
 *
 *     RateLimit-Policy: "max";q=60;w=60     quota `q` requests per window `w` seconds
 *     RateLimit: "max";r=59;t=42            `r` requests left, `t` seconds until one more is admitted
 *
 * The policy is named after the tier: stable per key, as the draft asks, public, and no `pk` (each key is its
 * own partition). The window slides exactly, so `t` is when the oldest counted request leaves it.
 */
/** RFC 9651 §4.1.6: a String, printable ASCII with `"` and `\` escaped. */
export function sfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new RangeError(`not a Structured Field String: ${JSON.stringify(value)}`);
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** RFC 9651 §4.1.4: an Integer, at most 15 digits. */
function sfInteger(value: number): string {
  if (!Number.isSafeInteger(value) || Math.abs(value) > 999_999_999_999_999)
    throw new RangeError(`not a Structured Field Integer: ${value}`);
  return String(value);
}

/** `RateLimit-Policy`: `"<policy>";q=<quota>;w=<window seconds>`. */
export function rateLimitPolicyField(policy: string, quota: number, windowSeconds: number): string {
  return `${sfString(policy)};q=${sfInteger(quota)};w=${sfInteger(windowSeconds)}`;
}

/** `RateLimit`: `"<policy>";r=<remaining>;t=<seconds until more quota>`. */
export function rateLimitField(policy: string, remaining: number, resetSeconds: number): string {
  return `${sfString(policy)};r=${sfInteger(remaining)};t=${sfInteger(Math.max(0, resetSeconds))}`;
}

/** Whole seconds from `now` until `at` (epoch ms), never negative. */
function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Both header sets of a counted answer, from one decision; `retryAfterSeconds` (a `429`) is also RateLimit's `t`. */
export function rateLimitHeaders(
  policy: string,
  d: { limit: number; remaining: number; resetAt: number },
  windowSeconds: number,
  now: number,
  retryAfterSeconds?: number,
): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(Math.ceil(d.resetAt / 1000)),
    'RateLimit-Policy': rateLimitPolicyField(policy, d.limit, windowSeconds),
    RateLimit: rateLimitField(policy, d.remaining, retryAfterSeconds ?? secondsUntil(d.resetAt, now)),
  };
}

/** The names of every rate-limit header (the mock removes them together from answers that are not counted). */
export const RATE_LIMIT_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
] as const;

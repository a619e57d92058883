/**
 * The standard rate-limit fields of draft-ietf-httpapi-ratelimit-headers (-10/-11), sent beside
 * `X-RateLimit-*` on every counted response and on a `429`:
 *
 *     RateLimit-Policy: "max";q=60;w=60     the key's policy: quota `q` requests per window `w` seconds
 *     RateLimit: "max";r=59;t=42            `r` requests left, `t` seconds until one more is admitted
 *
 * Each field is a Structured Field List (RFC 9651) of one Item: a String naming the policy, with Integer
 * parameters. The policy is named after the key's tier (`starter`, `pro`, `max`, `expired`): one name per
 * plan keeps `RateLimit-Policy` the same on every response of a key, as the draft asks, and a changed
 * name tells a client that its plan (so its quota) changed, not just the numbers. Tier names are public
 * (the contract's `Tier`), so the name discloses nothing; there is no partition key (`pk`): each key is
 * its own partition and the caller knows which key it sent.
 *
 * Our limit is an exact sliding window (src/domain/rate-limit.ts), so `t` is the seconds until the
 * oldest counted request leaves the window, which is when more quota is made available (the draft's
 * meaning of `t` since -10); on a `429` it equals `Retry-After`.
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

/**
 * Every rate-limit header of a counted answer, both sets from one decision: `X-RateLimit-*` and the
 * standard `RateLimit-Policy` / `RateLimit`. `retryAfterSeconds` (a `429`) is also the `t` of `RateLimit`.
 */
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

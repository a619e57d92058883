/**
 * Delay before the next attempt after `failures` consecutive failures: exponential from `baseMs`
 * (base, 2·base, 4·base, …) capped at `maxMs`, with "equal jitter" (half the step fixed, half drawn
 * from `random()` in [0, 1)), so a failing source is never retried sooner than half its step yet
 * many failing sources do not retry in lockstep. A server's Retry-After wins when longer (it is
 * bounded by `maxRetryAfterMs`, one day by default, so a silly header cannot park a source forever).
 * No failures: no delay beyond a Retry-After. Whole milliseconds.
 */
export function backoffMs(
  failures: number,
  opts: {
    baseMs: number;
    maxMs: number;
    retryAfterMs?: number | null;
    random?: () => number;
    maxRetryAfterMs?: number;
  },
): number {
  const random = opts.random ?? Math.random;
  const retryAfter = Math.min(Math.max(0, opts.retryAfterMs ?? 0), opts.maxRetryAfterMs ?? 86_400_000);
  if (!(failures >= 1) || !(opts.baseMs > 0) || !(opts.maxMs > 0)) return Math.round(retryAfter);
  const exponent = Math.min(failures - 1, 52);
  const step = Math.min(opts.maxMs, opts.baseMs * 2 ** exponent);
  const r = Math.min(Math.max(random(), 0), 1);
  const jittered = step / 2 + (step / 2) * r;
  return Math.round(Math.max(jittered, retryAfter));
}

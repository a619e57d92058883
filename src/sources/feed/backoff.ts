/**
 * Whole ms before the next attempt: `baseMs`·2^(failures-1) capped at `maxMs`, with equal jitter (half fixed, half
 * random) so failing sources never retry sooner than half a step nor in lockstep. A longer Retry-After wins,
 * bounded by `maxRetryAfterMs` (default a day) so a silly header cannot park a source forever.
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

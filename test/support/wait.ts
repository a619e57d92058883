/**
 * Waiting in tests: on the event itself where one exists (a promise, an emitter); else `until`, which
 * polls a condition up to a deadline (the deadline is a bound for a broken build, never a timing
 * assertion). `sleep` only plays a slow peer or lets a real server's own clock run (a Redis TTL); a
 * test that sleeps and then asserts that nothing happened must first show the thing could happen.
 */

/** Resolves once `cond` holds (checked every `everyMs`); throws naming `what` past `timeoutMs`. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  everyMs = 5,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
    await sleep(everyMs);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

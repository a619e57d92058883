/**
 * Errors that mean "a dependency cannot answer right now, retry shortly": the HTTP layer answers them
 * with the contract's `503` `serviceUnavailable` problem and `Retry-After`, the stream with its
 * `unavailable` close code (1013). Never a 500, never a 1011.
 */
import { SharedStateUnavailableError } from '../state/errors.js';
import { isStoreBusy, isStoreUnavailable } from '../store/errors.js';

/** Adapters may also mark an error as such (`unavailable: true`), e.g. a database connection refused. */
export function isDependencyUnavailable(err: unknown): boolean {
  if (err instanceof SharedStateUnavailableError) return true;
  if ((err as { unavailable?: unknown } | null)?.unavailable === true) return true;
  return isStoreBusy(err) || isStoreUnavailable(err);
}

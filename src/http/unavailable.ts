/**
 * Errors that mean "a dependency cannot answer right now, retry shortly": the HTTP layer answers them
 * with the contract's `503` `serviceUnavailable` problem and `Retry-After`, the stream with its
 * `unavailable` close code (1013). Never a 500, never a 1011. Read by class (src/store/ports/errors.ts):
 * connection, authentication, resource.
 */
import { sharedStateFailureClass } from '../state/errors.js';
import type { FailureClass } from '../store/ports/errors.js';

export type { FailureClass } from '../store/ports/errors.js';

/** The class of a dependency failure (database or shared state), or undefined for any other error. */
export function dependencyFailureClass(err: unknown): FailureClass | undefined {
  return sharedStateFailureClass(err);
}

/** Adapters may also mark an error as such (`unavailable: true`), e.g. a database connection refused. */
export function isDependencyUnavailable(err: unknown): boolean {
  return dependencyFailureClass(err) !== undefined;
}

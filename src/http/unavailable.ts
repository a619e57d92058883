/** Errors meaning "a dependency cannot answer now": 503 + Retry-After over HTTP, 1013 on the stream; never 500/1011. */
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

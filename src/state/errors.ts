/**
 * Errors of the shared-state adapters that callers map to a client-visible answer.
 */

/**
 * The shared state (Redis) could not be reached or did not answer in time. Stream slots do not fall
 * back to an in-process decision (that would let an account open one stream per instance): a stream
 * connect that meets this error is refused with the close code that tells the client to retry later.
 */
export class SharedStateUnavailableError extends Error {
  override readonly name = 'SharedStateUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

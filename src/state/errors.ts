/**
 * Errors of the shared-state adapters that callers map to a client-visible answer, and the class of a
 * shared-state (Redis) failure (the classes of src/store/ports/errors.ts).
 */
import { failureClass, type FailureClass } from '../store/ports/errors.js';

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

/**
 * Redis error replies by their first word: LOADING (restarting, reading its dataset), BUSY (a script
 * runs), OOM (maxmemory), MASTERDOWN / READONLY (a replica or failover), TRYAGAIN / CLUSTERDOWN
 * (cluster resharding) are `resource`; NOAUTH / WRONGPASS / NOPERM (credentials or ACL changed) are
 * `authentication`. ioredis' own "Connection is closed." and its retry limit are `connection`.
 */
const REPLY_CLASSES: ReadonlyArray<readonly [RegExp, FailureClass]> = [
  [/^(LOADING|BUSY|OOM|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN)\b/, 'resource'],
  [/^(NOAUTH|WRONGPASS|NOPERM)\b/, 'authentication'],
];
const CONNECTION_MESSAGES = /^(Connection is closed|Reached the max retries per request limit|Stream isn't writeable)/;

/** The class of a shared-state failure, or undefined when it is not one (see src/store/ports/errors.ts). */
export function sharedStateFailureClass(err: unknown): FailureClass | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const { name, message, cause } = err as { name?: unknown; message?: unknown; cause?: unknown };
  if (typeof message === 'string') {
    // Only a reply from Redis is read by its first word (an Error('BUSY …') of our own is not one).
    if (name === 'ReplyError') for (const [pattern, cls] of REPLY_CLASSES) if (pattern.test(message)) return cls;
    if (name === 'MaxRetriesPerRequestError' || CONNECTION_MESSAGES.test(message)) return 'connection';
  }
  if (err instanceof SharedStateUnavailableError)
    return sharedStateFailureClass(cause) ?? failureClass(cause) ?? 'connection';
  return failureClass(err);
}

/** Shared-state (Redis) errors callers map to a client answer, and their failure class (src/store/ports/errors.ts). */
import { failureClass, type FailureClass } from '../store/ports/errors.js';

/** Redis unreachable or too slow. Stream slots never fall back in-process (a stream per instance): retry later. */
export class SharedStateUnavailableError extends Error {
  override readonly name = 'SharedStateUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Redis replies by first word: loading, busy, OOM, failover, resharding: `resource`; credentials: `authentication`. */
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

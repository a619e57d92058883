/** What went wrong while fetching or reading a feed; `kind` is what the poller records and reports. */
export type FeedErrorKind =
  'parse' | 'charset' | 'too-large' | 'http' | 'timeout' | 'redirects' | 'network' | 'refused';

/** The longest error message of a fetch or parse (the source's record keeps it, `fns sources list` shows it). */
export const MESSAGE_MAX = 500;

/** Server-controlled text cut to `max` characters with `…`, otherwise as written (escaped where shown). */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  // Never half a surrogate pair.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

export class FeedError extends Error {
  readonly kind: FeedErrorKind;
  constructor(kind: FeedErrorKind, message: string, options?: { cause?: unknown }) {
    super(bounded(message, MESSAGE_MAX), options);
    this.name = 'FeedError';
    this.kind = kind;
  }
}

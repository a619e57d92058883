/** What went wrong while fetching or reading a feed; `kind` is what the poller records and reports. */
export type FeedErrorKind = 'parse' | 'charset' | 'too-large' | 'http' | 'timeout' | 'redirects' | 'network';

export class FeedError extends Error {
  readonly kind: FeedErrorKind;
  constructor(kind: FeedErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FeedError';
    this.kind = kind;
  }
}

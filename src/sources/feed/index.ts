/** Feeds fetched and parsed (RSS 0.9x/2.0, RSS 1.0/RDF, Atom 1.0, JSON Feed 1.x) into plain items. Pure. */
export { FeedError, type FeedErrorKind } from './errors.js';
export { FEED_FLOOR_MAX_SECONDS, parseFeed, type FeedItem, type ParsedFeed } from './parse.js';
export { canonicalUrl } from './url.js';
export { backoffMs } from './backoff.js';
export {
  fetchFeed,
  parseRetryAfter,
  RETRY_AFTER_MAX_MS,
  type FetchOptions,
  type FetchResult,
  type Validators,
} from './fetch.js';

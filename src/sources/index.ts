/**
 * Sources, the public face: feeds are fetched and parsed (./feed), mapped and enriched into
 * items the store deduplicates and stores (./pipeline), on a schedule by the poller: its scheduling
 * (./poller), one poll (./poll), the bookkeeping of what a poll did (./poll-record) and the settings and
 * schedule rules (./poll-rules). `fns serve` and `fns sources run` start it. The registry itself lives
 * in the store (SourceStore).
 */
export { SourcePoller } from './poller.js';
export type { PollerOptions } from './poller.js';
export {
  POLL_HTTP,
  POLL_DEFAULTS,
  pollerUserAgent,
  pollerOwnerId,
  nextPollAfterSuccess,
  nextPollAfterFailure,
} from './poll-rules.js';
export type { PollReport, PollerMetrics } from './poll-record.js';
export type { FetchFn } from './poll.js';
export { toSourcedItems, toSourcedItemsInSlices, toSourcedItem, sourcedArticle, SOURCE_NAME } from './pipeline.js';
export { fetchFeed, parseFeed, canonicalUrl, backoffMs, FeedError } from './feed/index.js';
export type { FeedItem, ParsedFeed, FetchOptions, FetchResult, Validators } from './feed/index.js';
export { startDemoFeeds, type DemoFeeds } from './demo-feeds.js';

/**
 * Sources (issue 11), the public face: feeds are fetched and parsed (./feed), mapped and enriched into
 * items the store deduplicates and stores (./pipeline), on a schedule by the poller (./poller), which
 * `fns serve` and `fns sources run` start. The registry itself lives in the store (SourceStore).
 */
export { SourcePoller, POLL_HTTP, POLL_DEFAULTS, pollerUserAgent, pollerOwnerId, nextPollAfterSuccess, nextPollAfterFailure } from './poller.js';
export type { PollerOptions, PollReport, PollerMetrics, FetchFn } from './poller.js';
export { toSourcedItems, toSourcedItemsInSlices, toSourcedItem, sourcedArticle, SOURCE_NAME } from './pipeline.js';
export { fetchFeed, parseFeed, parseFeedOffThread, canonicalUrl, backoffMs, FeedError } from './feed/index.js';
export type { FeedItem, ParsedFeed, FetchOptions, FetchResult, Validators } from './feed/index.js';
export { startDemoFeeds, type DemoFeeds } from './demo-feeds.js';

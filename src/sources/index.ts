/**
 * Sources, the public face: feeds are fetched and parsed (./feed), mapped and enriched into
 * items the store deduplicates and stores (./pipeline), on a schedule by the poller: its scheduling
 * (./poller), one poll (./poll), the bookkeeping of what a poll did (./poll-record) and the settings and
 * schedule rules (./poll-rules). `fns serve` and `fns sources run` start it. The registry itself lives
 * in the store (SourceStore).
 */
export { SourcePoller } from './poller.js';
export type { PollerOptions } from './poller.js';
export { POLL_DEFAULTS, pollerUserAgent, nextPollAfterSuccess, nextPollAfterFailure } from './poll-rules.js';
export type { PollReport } from './poll-record.js';
export { toSourcedItems, toSourcedItemsInSlices, sourcedArticle } from './pipeline.js';
export { parseFeed, FeedError } from './feed/index.js';

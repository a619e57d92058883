/**
 * Sources: feeds fetched and parsed (./feed), mapped to store items (./pipeline), polled on a schedule
 * (./poller, ./poll, ./poll-record, ./poll-rules) by `fns serve` and `fns sources run`. The registry is the store's.
 */
export { SourcePoller } from './poller.js';
export type { PollerOptions } from './poller.js';
export { POLL_DEFAULTS, pollerUserAgent, nextPollAfterSuccess, nextPollAfterFailure } from './poll-rules.js';
export type { PollReport } from './poll-record.js';
export { toSourcedItems, toSourcedItemsInSlices, sourcedArticle } from './pipeline.js';
export { parseFeed, FeedError } from './feed/index.js';

/**
 * The delivery core (docs/architecture.md "Delivery: one core, three adapters"): given a change feed, it
 * owns the cursor per subscriber, the filters, the presentation per variant, replay from an id, pacing
 * by the subscriber's backlog and the slow-subscriber rule. Three adapters sit on it: the service's
 * WebSocket (src/stream), the mock's (the same adapter over a MemoryFeed of the sample articles,
 * src/mock) and the webhook dispatcher (src/webhooks: the feed poller, the shared recent pages, the
 * ticker filter, the presentation cache). This is its public face; the rest is internal.
 */
export {
  DeliveryHub,
  REPLAY_PAGE,
  FAN_OUT_SLICE_MS,
  DEFAULT_FEED_POLL_MS,
  type Subscriber,
  type SubscribeSpec,
} from './hub.js';
export type { CloseSpec, FeedEntry, FeedPort, Sink } from './ports.js';
export { FeedPoller } from './feed.js';
export { MemoryFeed } from './memory-feed.js';
export { RecentFeed } from './recent.js';
export { matchesTickers, tickerFilter, type TickerFilter } from './filters.js';
export { PresentationCache } from './presentation.js';

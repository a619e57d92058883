/** The delivery core (docs/architecture.md "Delivery: one core, three adapters"): its public face. */
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

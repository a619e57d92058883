/** What the delivery core reads (a change feed in commit order, each entry with its `seq`) and writes to (sinks). */
import type { ArticleStore, FeedEntry } from '../store/ports/index.js';

export type { FeedEntry };

/** The change feed: the entries after a `seq`, oldest first, and the newest `seq`. */
export type FeedPort = Pick<ArticleStore, 'feedAfter' | 'latestSeq'>;

export type CloseSpec = { code: number; reason: string };

/** Where a subscriber's frames go, whole and in order; the core paces by `buffered()`, the sink decides how to end. */
export interface Sink {
  /** Still writable (not closed or closing). */
  open(): boolean;
  /** Bytes accepted but not yet sent to the subscriber. */
  buffered(): number;
  write(frames: Buffer[]): void;
  /** Resolves once there may be room (drained, closed, or a short poll passed); the core re-checks `buffered()`. */
  drained(): Promise<void>;
  /** The core ends this subscriber (slow subscriber, replay failed): close it with this code and reason. */
  end(spec: CloseSpec, why: string): void;
}

/**
 * What the delivery core reads: a change feed (the store's, or a MemoryFeed), in commit order, each
 * entry with its `seq`; and what it writes to: a sink per subscriber (a socket, for the WebSocket).
 */
import type { ArticleStore, FeedEntry } from '../store/ports/index.js';

export type { FeedEntry };

/** The change feed: the entries after a `seq`, oldest first, and the newest `seq`. */
export type FeedPort = Pick<ArticleStore, 'feedAfter' | 'latestSeq'>;

export type CloseSpec = { code: number; reason: string };

/**
 * Where a subscriber's frames go (e.g. the upgraded socket of a WebSocket). Whole frames, in order.
 * The core applies the slow-subscriber rule and the pacing through `buffered()`; the sink decides how
 * to end (e.g. a WebSocket close with the spec's code and reason).
 */
export interface Sink {
  /** Still writable (not closed or closing). */
  open(): boolean;
  /** Bytes accepted but not yet sent to the subscriber. */
  buffered(): number;
  write(frames: Buffer[]): void;
  /**
   * Resolves once the sink may have room again (its queue drained, it closed, or a short poll passed):
   * the core looks at `buffered()` again.
   */
  drained(): Promise<void>;
  /** The core ends this subscriber (slow subscriber, replay failed): close it with this code and reason. */
  end(spec: CloseSpec, why: string): void;
}

/**
 * What every store suite (ports, sources, paging) needs around its tests: the stores a test opens are
 * closed after it, the engine is cleaned after each test and after the suite, and the tests are collected
 * first so the suite can count what it registers (for the loud "skipped N tests" line).
 */
import { afterAll, afterEach, describe, it } from 'vitest';
import type { NewArticle, Store } from '../../src/store/ports/index.js';

/** An article to store: `content`, regular, no sentiment, date or tickers unless `over` says. */
export const article = (content: string, over: Partial<NewArticle> = {}): NewArticle => ({
  content,
  urgency: 'regular',
  sentiment: null,
  published_at: null,
  tickers: [],
  ...over,
});

export type SuiteTest = [title: string, fn: () => Promise<void>];

/** The stores the tests opened, closed newest first. */
export class OpenedStores {
  private readonly stores: Store[] = [];
  track<S extends Store>(store: S): S {
    this.stores.push(store);
    return store;
  }
  /** A store the test closed itself. */
  forget(store: Store): void {
    const at = this.stores.indexOf(store);
    if (at >= 0) this.stores.splice(at, 1);
  }
  async closeAll(): Promise<void> {
    for (const s of this.stores.splice(0).reverse()) await s.close();
  }
}

/**
 * Registers `tests` under one describe, closing what they opened (`closeAll`) and cleaning the engine (`h.cleanup`).
 */
export function registerStoreTests(
  title: string,
  tests: SuiteTest[],
  h: { skip?: boolean; cleanup(): Promise<void> },
  closeAll: () => Promise<void>,
  options: { timeout?: number } = {},
): void {
  describe(title, () => {
    afterEach(async () => {
      await closeAll();
      if (!h.skip) await h.cleanup();
    });
    afterAll(async () => {
      await closeAll();
      if (!h.skip) await h.cleanup();
    });
    for (const [name, fn] of tests) (h.skip ? it.skip : it)(name, options, fn);
  });
}

/**
 * Ingestion work in slices (at most `budgetMs` or `maxItems` items) with a turn of the event loop between them,
 * so requests, streams and timers run (docs/sources.md "Large inputs"). Results and order are the plain loop's.
 */

/** A turn of the event loop: what is waiting (I/O, timers) runs before the promise resolves. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface SliceBudget {
  /** A slice ends once it has run this long (default 4 ms)... */
  budgetMs?: number;
  /** ...or after this many items (default: no count limit). */
  maxItems?: number;
  /** Monotonic milliseconds (default performance.now). */
  now?: () => number;
  /** Called before each turn given back to the event loop (tests count them). */
  onYield?: () => void;
}

const SLICE_BUDGET_MS = 4;

/** `fn` over `items` in order, giving the event loop a turn between slices; the results in item order. */
export async function mapInSlices<T, R>(
  items: Iterable<T>,
  fn: (item: T, index: number) => R,
  opts: SliceBudget = {},
): Promise<R[]> {
  const out: R[] = [];
  await eachInSlices(items, (item, i) => void out.push(fn(item, i)), opts);
  return out;
}

/** `fn` over `items` in order, giving the event loop a turn between slices. */
export async function eachInSlices<T>(
  items: Iterable<T>,
  fn: (item: T, index: number) => void,
  opts: SliceBudget = {},
): Promise<void> {
  const turn = sliceTurns(opts);
  let i = 0;
  for (const item of items) {
    // Awaited only when the slice is spent: the items of one slice run without a microtask between them.
    const spent = turn();
    if (spent) await spent;
    fn(item, i++);
  }
}

/** For items that arrive one by one: await the returned function before each; it yields once a slice is spent. */
export function sliceTurns(opts: SliceBudget = {}): () => Promise<void> | void {
  const budget = opts.budgetMs ?? SLICE_BUDGET_MS;
  const maxItems = opts.maxItems ?? Number.POSITIVE_INFINITY;
  const now = opts.now ?? (() => performance.now());
  let started = now();
  let inSlice = 0;
  return () => {
    if (inSlice > 0 && (inSlice >= maxItems || now() - started >= budget)) {
      opts.onYield?.();
      inSlice = 1;
      return nextTurn().then(() => {
        started = now();
      });
    }
    inSlice++;
  };
}

/** `items` to `take` in chunks of `size`, each after the last was taken and a turn (as ./off-thread.ts `stream`). */
export async function eachChunk<T>(
  items: readonly T[],
  size: number,
  take: (chunk: T[]) => void | Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    if (i > 0) await nextTurn();
    await take(items.slice(i, i + size));
  }
}

/**
 * Ingestion work cut into slices so that no step holds the event loop for long (the 10 ms goal of
 * docs/sources.md): between slices, a turn of the event loop (setImmediate) lets requests, the stream,
 * the admin listener and timers run. A slice ends once it has taken `budgetMs` (measured with the
 * injected clock) or after `maxItems` items, whichever comes first; results and their order are those
 * of the plain loop.
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
  const budget = opts.budgetMs ?? SLICE_BUDGET_MS;
  const maxItems = opts.maxItems ?? Number.POSITIVE_INFINITY;
  const now = opts.now ?? (() => performance.now());
  let started = now();
  let inSlice = 0;
  let i = 0;
  for (const item of items) {
    if (inSlice > 0 && (inSlice >= maxItems || now() - started >= budget)) {
      opts.onYield?.();
      await nextTurn();
      started = now();
      inSlice = 0;
    }
    fn(item, i++);
    inSlice++;
  }
}

/**
 * For a loop that cannot be handed over whole (items arrive one by one): call the returned function
 * before each item; it resolves at once within a slice, and after a turn of the event loop once the
 * slice has run its budget (or `maxItems` items).
 */
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

/**
 * `items` handed to `take` in chunks of `size`, in order, each once the one before was taken and the
 * event loop had a turn: what a chunked worker (./off-thread.ts `stream`) does, for the same input
 * prepared on this thread.
 */
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

/**
 * Row work written once as a generator of steps: driven synchronously for SQLite (one synchronous
 * transaction nothing else on the thread can join) or awaited for PostgreSQL; `yield* read(x)` gives x's rows.
 */
export type Rows<T> = T | Promise<T>;
export type Step<R> = Generator<unknown, R, unknown>;

export function* read<T>(rows: Rows<T>): Generator<Rows<T>, T, unknown> {
  return (yield rows) as T;
}

/** Drives `steps` with rows that answer at once (a promise among them is a programming error). */
export function runSteps<R>(steps: Step<R>): R {
  let r = steps.next();
  while (!r.done) {
    if (r.value instanceof Promise) throw new Error('runSteps: rows must answer synchronously');
    r = steps.next(r.value);
  }
  return r.value;
}

/** Drives `steps`, awaiting each read or write. */
export async function runStepsAsync<R>(steps: Step<R>): Promise<R> {
  let r = steps.next();
  while (!r.done) r = steps.next(await r.value);
  return r.value;
}

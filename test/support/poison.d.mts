/** The mark: a text holding it cannot be normalised (poison.mjs). */
export const POISON: string;
/** From now on, on this thread, normalising a text that holds POISON throws a TypeError. */
export function poison(): void;
/** Undoes `poison`. */
export function unpoison(): void;

/** The first index of `items` where `holds` is true, `items.length` when none; `holds` must be false, then true. */
export function firstIndex<T>(items: readonly T[], holds: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holds(items[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

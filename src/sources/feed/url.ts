/** URLs of feed items: resolution against a base, and the canonical form used for exact deduplication. */

/** Canonical form for exact dedup (src/dedup/link.ts); null for a URL that is not absolute http(s). */
export { canonicalLink as canonicalUrl } from '../../dedup/link.js';

/** `ref` resolved against `base` (itself possibly relative to nothing); an absolute http(s) URL or null. */
export function resolveHttpUrl(ref: string | null | undefined, base: string | null | undefined): string | null {
  const r = ref?.trim();
  if (!r) return null;
  try {
    const u = base ? new URL(r, base) : new URL(r);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** `ref` resolved against `base`, any scheme (for xml:base chains); `base` when there is no `ref` or it cannot be. */
export function resolveBase(ref: string | null | undefined, base: string | null): string | null {
  const r = ref?.trim();
  if (!r) return base;
  try {
    return (base ? new URL(r, base) : new URL(r)).href;
  } catch {
    return base;
  }
}

/** URLs of feed items: resolution against a base, and the canonical form used for exact deduplication. */
import { canonicalLink } from '../../dedup/link.js';

function httpUrl(u: URL): boolean {
  return u.protocol === 'http:' || u.protocol === 'https:';
}

/** `ref` resolved against `base` (itself possibly relative to nothing); an absolute http(s) URL or null. */
export function resolveHttpUrl(ref: string | null | undefined, base: string | null | undefined): string | null {
  if (ref == null) return null;
  const r = ref.trim();
  if (r === '') return null;
  let u: URL;
  try {
    u = base ? new URL(r, base) : new URL(r);
  } catch {
    return null;
  }
  return httpUrl(u) ? u.href : null;
}

/** `ref` resolved against `base`, any scheme (for xml:base chains); null when it cannot be. */
export function resolveBase(ref: string | null | undefined, base: string | null): string | null {
  if (ref == null || ref.trim() === '') return base;
  try {
    return (base ? new URL(ref.trim(), base) : new URL(ref.trim())).href;
  } catch {
    return base;
  }
}

/** Canonical form for exact dedup (src/dedup/link.ts); null for a URL that is not absolute http(s). */
export function canonicalUrl(url: string): string | null {
  return canonicalLink(url);
}

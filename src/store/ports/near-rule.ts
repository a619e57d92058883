/**
 * The near-duplicate rule the store adapters apply inside `ingestItems` (both engines): the window and
 * the precise pairwise decision of src/dedup/near.ts. Adapters take it as an option so tests can pass
 * their own.
 */
import { isNearDuplicate, NEAR_DUPLICATE_WINDOW_MS } from '../../dedup/near.js';
import type { NearDuplicateRule } from './index.js';

export const defaultNearRule: NearDuplicateRule = { windowMs: NEAR_DUPLICATE_WINDOW_MS, isNearDuplicate };

/** Exact dedup records (same item, same canonical URL) are kept at least this long. */
export const SEEN_RETENTION_MS = 30 * 24 * 3600 * 1000;

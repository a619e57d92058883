/**
 * The near-duplicate rule the store adapters apply inside `ingestItems` (both engines): the window and
 * the precise pairwise decision of src/dedup/near.ts. Adapters take it as an option so tests can pass
 * their own.
 */
import { isNearDuplicate, NEAR_DUPLICATE_WINDOW_MS } from '../../dedup/near.js';
import type { NearDuplicateRule } from './index.js';

export const defaultNearRule: NearDuplicateRule = { windowMs: NEAR_DUPLICATE_WINDOW_MS, isNearDuplicate };

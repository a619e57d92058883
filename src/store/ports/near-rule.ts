/** The near-duplicate rule of `ingestItems` (src/dedup/near.ts); an adapter option, so tests can pass their own. */
import { isNearDuplicate, NEAR_DUPLICATE_WINDOW_MS } from '../../dedup/near.js';
import type { NearDuplicateRule } from './index.js';

export const defaultNearRule: NearDuplicateRule = { windowMs: NEAR_DUPLICATE_WINDOW_MS, isNearDuplicate };

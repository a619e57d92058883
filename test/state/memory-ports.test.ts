/** The shared-state port suite on the in-process adapters (one instance: both "instances" are the same). */
import { limits } from '../../src/contract/index.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../../src/state/memory.js';
import { MemoryStreamSlots } from '../../src/state/stream-slots.js';
import { portSuite } from './ports.suite.js';

portSuite('memory adapters', () => ({
  rateLimiters: () => {
    const rl = new MemoryRateLimiter();
    return [rl, rl];
  },
  ipGuards: (options) => {
    const g = new MemoryIpGuard(limits.ipGuard, options);
    return [g, g];
  },
  slotPair: () => {
    const s = new MemoryStreamSlots();
    return [s, s];
  },
}));

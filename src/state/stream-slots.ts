/**
 * Stream slots: how many streams an account may hold open (asyncapi.yaml `connectionsPerAccount`). The port
 * is async for the Redis adapter; the in-memory one decides synchronously, so attempts in one process race safely.
 * `connectionId` is one attempt's token, never reused, and `release` fences it: a `tryAcquire` landing after
 * the release (a stalled shared store) holds nothing. A caller whose `tryAcquire` rejected releases at once.
 */
import { stream } from '../contract/index.js';

export interface StreamSlots {
  /** Takes a slot for the attempt; false when none is left or the token is fenced. True again while holding it. */
  tryAcquire(accountId: string, connectionId: string): Promise<boolean>;
  /** Frees the token's slot (if any) and fences it. Call when the connection ends, and when `tryAcquire` rejected. */
  release(accountId: string, connectionId: string): Promise<void>;
}

/** How long a released token stays fenced in memory (the Redis lease, far past any in-process attempt). */
export const MEMORY_FENCE_MS = 20_000;

export class MemoryStreamSlots implements StreamSlots {
  private readonly held = new Map<string, Set<string>>();
  /** Released tokens (`account NUL token`) → when released; insertion order is release order. */
  private readonly fenced = new Map<string, number>();

  constructor(
    private readonly perAccount: number = stream.connectionsPerAccount,
    private readonly options: { fenceMs?: number; now?: () => number } = {},
  ) {}

  async tryAcquire(accountId: string, connectionId: string): Promise<boolean> {
    this.prune();
    if (this.fenced.has(fenceKey(accountId, connectionId))) return false;
    let set = this.held.get(accountId);
    if (!set) {
      set = new Set();
      this.held.set(accountId, set);
    }
    if (set.has(connectionId)) return true;
    if (set.size >= this.perAccount) return false;
    set.add(connectionId);
    return true;
  }

  async release(accountId: string, connectionId: string): Promise<void> {
    this.prune();
    const fence = fenceKey(accountId, connectionId);
    this.fenced.delete(fence);
    this.fenced.set(fence, this.now());
    const set = this.held.get(accountId);
    if (!set) return;
    set.delete(connectionId);
    if (set.size === 0) this.held.delete(accountId);
  }

  /** Slots in use (for tests and diagnostics). */
  inUse(): number {
    let n = 0;
    for (const s of this.held.values()) n += s.size;
    return n;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Forgets fences older than `fenceMs` (oldest first: the map is in release order). */
  private prune(): void {
    const horizon = this.now() - (this.options.fenceMs ?? MEMORY_FENCE_MS);
    for (const [token, at] of this.fenced) {
      if (at > horizon) break;
      this.fenced.delete(token);
    }
  }
}

const fenceKey = (accountId: string, connectionId: string): string => `${accountId}\u0000${connectionId}`;

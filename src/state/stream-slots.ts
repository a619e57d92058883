/**
 * Stream slots: how many streams an account may hold open (`connectionsPerAccount` of asyncapi.yaml,
 * one). The port is async so that a shared adapter (Redis, for several instances) fits behind it; the
 * in-memory adapter decides synchronously, so simultaneous attempts in one process race safely.
 *
 * Tokens: the `connectionId` of a call is the token of one connection attempt, never reused. A slot
 * must never outlive the attempt that asked for it, so `release` also fences the token: a `tryAcquire`
 * of it that lands after the release (a request to a shared store that stalled, whose caller gave up
 * and answered 1013 long before the store resumed and ran it) holds nothing and answers false. A caller
 * whose `tryAcquire` rejected (timed out, store unreachable) therefore releases the token at once: the
 * request may still run later, and must find it fenced.
 */
import { stream } from '../contract/index.js';

export interface StreamSlots {
  /**
   * Takes a slot of `accountId` for the attempt `connectionId`; false when the account has none left,
   * or when the token was released before (fenced). Asking again while holding it: true.
   */
  tryAcquire(accountId: string, connectionId: string): Promise<boolean>;
  /**
   * Frees the slot held by `connectionId` (a no-op when it holds none) and fences the token: no later
   * `tryAcquire` of it holds a slot. Call it when the connection ends, and when the attempt gave up on
   * its `tryAcquire` (it rejected), whatever that request's fate.
   */
  release(accountId: string, connectionId: string): Promise<void>;
}

/** How long a released token stays fenced in memory (as long as the Redis adapter's lease, far past any in-process attempt). */
export const MEMORY_FENCE_MS = 20_000;

export class MemoryStreamSlots implements StreamSlots {
  private readonly held = new Map<string, Set<string>>();
  /** Released tokens of an account (`account NUL token`) → when they were released (insertion order is release order). */
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

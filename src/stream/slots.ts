/**
 * Stream slots: how many streams an account may hold open (`connectionsPerAccount` of asyncapi.yaml,
 * one). The port is async so that a shared adapter (Redis, for several instances) fits behind it; the
 * in-memory adapter decides synchronously, so simultaneous attempts in one process race safely.
 */
import { stream } from '../contract/index.js';

export interface StreamSlots {
  /** Takes a slot of `accountId` for `connectionId`; false when the account has none left. */
  tryAcquire(accountId: string, connectionId: string): Promise<boolean>;
  /** Frees the slot held by `connectionId` (a no-op when it holds none). */
  release(accountId: string, connectionId: string): Promise<void>;
}

export class MemoryStreamSlots implements StreamSlots {
  private readonly held = new Map<string, Set<string>>();

  constructor(private readonly perAccount: number = stream.connectionsPerAccount) {}

  async tryAcquire(accountId: string, connectionId: string): Promise<boolean> {
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
}

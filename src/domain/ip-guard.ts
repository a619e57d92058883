/**
 * Abuse protection (spec §5.7, DESIGN.md §2): when `distinctKeys` different key strings are presented
 * from one client IP within `windowMs`, the request that brings the count there is refused and the IP
 * is blocked for `blockMs`.
 */
export interface IpState {
  /** key fingerprint → last time it was presented */
  keys: Map<string, number>;
  blockedUntil: number;
}

export interface IpGuardRules {
  distinctKeys: number;
  windowMs: number;
  blockMs: number;
}

export type IpVerdict = { allowed: true } | { allowed: false; blockedUntil: number };

export function newIpState(): IpState {
  return { keys: new Map(), blockedUntil: 0 };
}

/** Records that `keyId` (a fingerprint of the presented key, or null when none) was used at `now`. */
export function presentKey(state: IpState, keyId: string | null, now: number, rules: IpGuardRules): IpVerdict {
  if (now < state.blockedUntil) return { allowed: false, blockedUntil: state.blockedUntil };
  for (const [k, t] of state.keys) if (t <= now - rules.windowMs) state.keys.delete(k);
  if (keyId === null) return { allowed: true };
  state.keys.set(keyId, now);
  if (state.keys.size >= rules.distinctKeys) {
    state.blockedUntil = now + rules.blockMs;
    state.keys.clear();
    return { allowed: false, blockedUntil: state.blockedUntil };
  }
  return { allowed: true };
}

/** True when the state holds nothing worth keeping (it may be dropped). */
export function isIdle(state: IpState, now: number, rules: IpGuardRules): boolean {
  if (now < state.blockedUntil) return false;
  for (const t of state.keys.values()) if (t > now - rules.windowMs) return false;
  return true;
}

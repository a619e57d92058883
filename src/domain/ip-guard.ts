/**
 * IP guard (spec §5.7): the request that brings one IP to `distinctKeys` keys within `windowMs` is refused, and the
 * IP is blocked for `blockMs`.
 */
import { BlockList, isIP } from 'node:net';

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

/** `blockedNow`: this very request started the block (the one moment worth logging). */
export type IpVerdict = { allowed: true } | { allowed: false; blockedUntil: number; blockedNow?: boolean };

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
    return { allowed: false, blockedUntil: state.blockedUntil, blockedNow: true };
  }
  return { allowed: true };
}

/** True when the state holds nothing worth keeping (it may be dropped). */
export function isIdle(state: IpState, now: number, rules: IpGuardRules): boolean {
  if (now < state.blockedUntil) return false;
  for (const t of state.keys.values()) if (t > now - rules.windowMs) return false;
  return true;
}

/** Never blocked (IP_GUARD_EXEMPT): `loopback`, IPs, CIDRs; IPv4 also IPv4-mapped, as dual-stack sockets report it. */
export function exemptionMatcher(entries: readonly string[]): (ip: string) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries) {
    if (entry === 'loopback') {
      list.addSubnet('127.0.0.0', 8, 'ipv4');
      list.addAddress('::1', 'ipv6');
      continue;
    }
    const [addr, prefix] = entry.split('/') as [string, string | undefined];
    const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(addr, family);
    else list.addSubnet(addr, Number(prefix), family);
  }
  return (ip) => {
    const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
    const addr = v4 ?? ip;
    const family = isIP(addr);
    return family !== 0 && list.check(addr, family === 6 ? 'ipv6' : 'ipv4');
  };
}

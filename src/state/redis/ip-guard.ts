/**
 * The IP guard (src/domain/ip-guard.ts `presentKey`) across instances: per IP, presented key fingerprints
 * and a block marker under one hash tag, decided by one Lua script that also says whether this call
 * started the block (`onBlock` once across instances). Clock: the caller's `now`, as in rate-limiter.ts.
 */
import type { Redis } from 'ioredis';
import { exemptionMatcher, type IpGuardRules, type IpVerdict } from '../../domain/ip-guard.js';
import type { IpGuard, IpGuardOptions } from '../ports.js';
import { lua, runScript, slotKey } from './script.js';

/**
 * KEYS[1] fingerprints (zset), KEYS[2] blockedUntil (string); ARGV: now, fingerprint ('' for none),
 * distinctKeys, windowMs, blockMs. Returns {allowed 0|1, blockedUntil, blockedNow 0|1}.
 */
const CHECK = lua(`
local now = tonumber(ARGV[1])
local blocked = tonumber(redis.call('GET', KEYS[2]) or '0')
if now < blocked then return {0, string.format('%.0f', blocked), 0} end
local window = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - window))
if ARGV[2] == '' then return {1, '0', 0} end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local blockMs = tonumber(ARGV[5])
  local untilMs = string.format('%.0f', now + blockMs)
  redis.call('SET', KEYS[2], untilMs, 'PX', blockMs)
  redis.call('DEL', KEYS[1])
  return {0, untilMs, 1}
end
redis.call('PEXPIRE', KEYS[1], window)
return {1, '0', 0}
`);

export class RedisIpGuard implements IpGuard {
  private readonly exempt: (ip: string) => boolean;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly rules: IpGuardRules,
    private readonly options: IpGuardOptions = {},
  ) {
    this.exempt = exemptionMatcher(options.exempt ?? []);
  }

  async check(ip: string, keyFingerprint: string | null, now: number): Promise<IpVerdict> {
    if (this.exempt(ip)) return { allowed: true };
    const keys = [slotKey(this.keyPrefix, 'ip', ip, ':keys'), slotKey(this.keyPrefix, 'ip', ip, ':block')];
    const { distinctKeys, windowMs, blockMs } = this.rules;
    const r = (await runScript(this.redis, CHECK, keys, [
      now,
      keyFingerprint ?? '',
      distinctKeys,
      windowMs,
      blockMs,
    ])) as [number, string, number];
    if (r[0] === 1) return { allowed: true };
    const blockedUntil = Number(r[1]);
    if (r[2] !== 1) return { allowed: false, blockedUntil };
    this.options.onBlock?.(ip, blockedUntil);
    return { allowed: false, blockedUntil, blockedNow: true };
  }
}

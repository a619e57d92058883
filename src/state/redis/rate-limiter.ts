/**
 * The exact sliding window of src/domain/rate-limit.ts across instances: a sorted set per key, decided by
 * one atomic Lua script; refused requests are never written. Clock: the caller's `now`, so its headers and
 * the in-memory fallback agree; instances need NTP, and a skew δ allows at most `limit` per `windowMs − δ`.
 */
import type { Redis } from 'ioredis';
import type { RateDecision } from '../../domain/rate-limit.js';
import type { RateLimiter } from '../ports.js';
import { lua, runScript, slotKey } from './script.js';

/**
 * KEYS[1] the key's log; ARGV: now, limit, windowMs, member. Mirrors admit() (live: t > now − windowMs).
 * Returns {admitted 0|1, remaining, resetAt, retryAfterSeconds}.
 */
const HIT = lua(`
local key = KEYS[1]
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now - window))
local n = redis.call('ZCARD', key)
local admitted = 0
if n < limit then
  redis.call('ZADD', key, ARGV[1], ARGV[4])
  n = n + 1
  admitted = 1
end
if n > 0 then redis.call('PEXPIRE', key, window) end
local resetAt = now
local first = math.max(0, n - math.max(limit, 1))
local entry = redis.call('ZRANGE', key, first, first, 'WITHSCORES')
if entry[2] then resetAt = tonumber(entry[2]) + window end
local retryAfter = 0
if admitted == 0 then
  local freeAt = now + window
  local nth = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
  if nth[2] then freeAt = tonumber(nth[2]) + window end
  retryAfter = math.max(1, math.ceil((freeAt - now) / 1000))
end
local remaining = limit - n
if remaining < 0 then remaining = 0 end
return {admitted, remaining, string.format('%.0f', resetAt), retryAfter}
`);

export class RedisRateLimiter implements RateLimiter {
  private seq = 0;
  private readonly instance = Math.random().toString(36).slice(2, 10);

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async hit(keyId: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    // The member only has to be unique: two requests at the same millisecond are two entries.
    const member = `${now}:${this.instance}:${(this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER)}`;
    const r = (await runScript(
      this.redis,
      HIT,
      [slotKey(this.keyPrefix, 'rl', keyId)],
      [now, limit, windowMs, member],
    )) as [number, number, string, number];
    return {
      admitted: r[0] === 1,
      limit,
      remaining: Number(r[1]),
      resetAt: Number(r[2]),
      retryAfterSeconds: Number(r[3]),
    };
  }
}

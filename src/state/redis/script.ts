/** Runs a Lua script in one round trip: EVALSHA, then EVAL on NOSCRIPT (a fresh or restarted Redis). */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

export function lua(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

export async function runScript(
  redis: Redis,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
    return await redis.eval(script.source, keys.length, ...keys, ...args);
  }
}

/**
 * `<prefix>{<port>:<subject>}<suffix>`: the braces are a Cluster hash tag shared by every key a script
 * touches; the prefix stays outside it, so a per-run prefix does not pile every key onto one slot.
 */
export function slotKey(prefix: string, port: string, subject: string, suffix = ''): string {
  // A `}` inside the subject would end the hash tag early; subjects are ids, IPs and fingerprints.
  return `${prefix}{${port}:${subject.replaceAll('}', '%7D')}}${suffix}`;
}

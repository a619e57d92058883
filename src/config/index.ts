/** The only module that reads the environment. Validates every variable with a clear message. */
import { isIP } from 'node:net';
import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  trustProxy: boolean | number | string;
  streamRecheckMs: number;
  embeddingsUrl?: string;
  embeddingsModel?: string;
  embeddingsApiKey?: string;
  embeddingsTimeoutMs: number;
  brand: string;
  validateResponses: boolean;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function url(env: NodeJS.ProcessEnv, name: string, schemes: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new ConfigError(`${name} must use ${schemes.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

function trustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  // A hop count: trust that many proxies in front of the service (Express reads a number as hops).
  if (/^\d+$/.test(raw)) return Number(raw);
  // Express's own syntax: a list of trusted addresses/subnets, e.g. "loopback, 10.0.0.0/8".
  const named = new Set(['loopback', 'linklocal', 'uniquelocal']);
  const valid = raw.split(',').every((part) => {
    const entry = part.trim();
    if (named.has(entry)) return true;
    const [addr, prefix, extra] = entry.split('/');
    const family = isIP(addr ?? '');
    if (family === 0 || extra !== undefined) return false;
    return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
  });
  if (valid) return raw;
  throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a list of trusted addresses, got "${raw}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const brand = env.FNS_BRAND ?? 'fns';
  if (!/^[a-z][a-z0-9]{1,15}$/.test(brand)) throw new ConfigError(`FNS_BRAND must be 2-16 lower-case letters or digits, got "${brand}"`);
  const cfg: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: env.HOST ?? '0.0.0.0',
    dataDir: resolve(env.DATA_DIR ?? './data'),
    trustProxy: trustProxy(env.TRUST_PROXY),
    streamRecheckMs: int(env, 'STREAM_RECHECK_MS', 300_000, 10, 86_400_000),
    embeddingsTimeoutMs: int(env, 'EMBEDDINGS_TIMEOUT_MS', 5000, 100, 120_000),
    brand,
    validateResponses: env.VALIDATE_RESPONSES === 'true',
  };
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres', 'postgresql']);
  const redisUrl = url(env, 'REDIS_URL', ['redis', 'rediss']);
  const embeddingsUrl = url(env, 'EMBEDDINGS_URL', ['http', 'https']);
  if (databaseUrl) cfg.databaseUrl = databaseUrl;
  if (redisUrl) cfg.redisUrl = redisUrl;
  if (embeddingsUrl) {
    cfg.embeddingsUrl = embeddingsUrl;
    if (!env.EMBEDDINGS_MODEL) throw new ConfigError('EMBEDDINGS_MODEL is required when EMBEDDINGS_URL is set');
    cfg.embeddingsModel = env.EMBEDDINGS_MODEL;
    if (env.EMBEDDINGS_API_KEY) cfg.embeddingsApiKey = env.EMBEDDINGS_API_KEY;
  }
  return cfg;
}

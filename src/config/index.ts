/** The only module that reads the environment. Validates every variable with a clear message. */
import { isIP } from 'node:net';
import { resolve } from 'node:path';

export interface Config {
  port: number;
  /** HOST; unset = the command's default (`serve`: every interface, `demo`: loopback). */
  host?: string;
  dataDir: string;
  databaseUrl?: string;
  /** DATABASE_SCHEMA: the PostgreSQL schema of this deployment (default `public`). */
  databaseSchema: string;
  redisUrl?: string;
  /** REDIS_PREFIX: the prefix of every Redis key of this deployment (default `fns`). */
  redisPrefix: string;
  trustProxy: boolean | number | string;
  streamRecheckMs: number;
  embeddingsUrl?: string;
  embeddingsModel?: string;
  embeddingsApiKey?: string;
  embeddingsTimeoutMs: number;
  brand: string;
  validateResponses: boolean;
  /** Addresses and subnets the IP guard never blocks (IP_GUARD_EXEMPT): `loopback`, IPs, CIDRs. */
  ipGuardExempt: string[];
  /** ADMIN_PORT: the admin listener (/healthz, /readyz, /metrics); unset = none. */
  adminPort?: number;
  /** ADMIN_HOST: where the admin listener binds; default 127.0.0.1 (loopback). */
  adminHost: string;
  /** ADMIN_TOKEN: the operator token of POST /admin/v1/articles (push); unset = push is off. Never logged. */
  adminToken?: string;
  /** MAX_CONNECTIONS: TCP connections the partner listener holds open at once (REST and streams); 0 = no cap. */
  maxConnections: number;
  /** MAX_CONNECTIONS_PER_ADDRESS: from one client (socket) address; 0 = no cap. Default 256, or 0 with TRUST_PROXY. */
  maxConnectionsPerAddress: number;
  /**
   * WEBHOOK_ALLOW_PRIVATE: webhooks may go to private, loopback and link-local addresses, and over http (tests, a
   * private network).
   */
  webhookAllowPrivate: boolean;
  /**
   * FEED_ALLOW_PRIVATE: the feed poller may connect (and follow redirects) to private, loopback and link-local
   * addresses (tests, the demo, a private network).
   */
  feedAllowPrivate: boolean;
  /**
   * WEBHOOK_SECRETS_KEY: 32 bytes (base64 or 64 hex digits) encrypting the webhook signing secrets at rest; unset =
   * stored as given. Never logged.
   */
  webhookSecretsKey?: Buffer;
  /** Said once at start (e.g. a risky but valid setting). */
  warnings: string[];
}

/** Every variable the service reads. Set but empty is an error, never a silent default. */
const VARIABLES = [
  'PORT',
  'HOST',
  'DATA_DIR',
  'DATABASE_URL',
  'REDIS_URL',
  'TRUST_PROXY',
  'STREAM_RECHECK_MS',
  'EMBEDDINGS_URL',
  'EMBEDDINGS_MODEL',
  'EMBEDDINGS_API_KEY',
  'EMBEDDINGS_TIMEOUT_MS',
  'FNS_BRAND',
  'VALIDATE_RESPONSES',
  'IP_GUARD_EXEMPT',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'DATABASE_SCHEMA',
  'REDIS_PREFIX',
  'ADMIN_TOKEN',
  'MAX_CONNECTIONS',
  'MAX_CONNECTIONS_PER_ADDRESS',
  'WEBHOOK_ALLOW_PRIVATE',
  'WEBHOOK_SECRETS_KEY',
  'FEED_ALLOW_PRIVATE',
] as const;

/** Connection caps of the partner listener (docs/operations.md): in all, and per client address. */
export const DEFAULT_MAX_CONNECTIONS = 10_000;
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined) return dflt;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function url(env: NodeJS.ProcessEnv, name: string, schemes: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
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

/** One entry of an address list: `loopback`, an IP address, or a subnet in CIDR notation. */
function isAddressOrSubnet(entry: string, named: ReadonlySet<string>): boolean {
  if (named.has(entry)) return true;
  const [addr, prefix, extra] = entry.split('/');
  const family = isIP(addr ?? '');
  if (family === 0 || extra !== undefined) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

function trustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  // A hop count: trust that many proxies in front of the service (Express reads a number as hops).
  if (/^\d+$/.test(raw)) return Number(raw);
  // Express's own syntax: a list of trusted addresses/subnets, e.g. "loopback, 10.0.0.0/8".
  const named = new Set(['loopback', 'linklocal', 'uniquelocal']);
  if (raw.split(',').every((part) => isAddressOrSubnet(part.trim(), named))) return raw;
  throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a list of trusted addresses, got "${raw}"`);
}

function ipGuardExempt(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const entries = raw.split(',').map((e) => e.trim());
  const bad = entries.find((e) => !isAddressOrSubnet(e, new Set(['loopback'])));
  if (bad !== undefined)
    throw new ConfigError(
      `IP_GUARD_EXEMPT must be a comma-separated list of addresses, CIDR subnets or "loopback", got "${bad}"`,
    );
  return entries;
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function host(raw: string | undefined, name = 'HOST'): string | undefined {
  if (raw === undefined) return undefined;
  if (isIP(raw) !== 0 || /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/i.test(raw)) return raw;
  throw new ConfigError(`${name} must be an IP address or a host name to listen on, got "${raw}"`);
}

/** A PostgreSQL schema name or a Redis key prefix: letters, digits and `_`, starting with a letter. */
function identifier(env: NodeJS.ProcessEnv, name: string, dflt: string): string {
  const raw = env[name];
  if (raw === undefined) return dflt;
  if (/^[a-z][a-z0-9_]{0,62}$/i.test(raw)) return raw;
  throw new ConfigError(`${name} must be 1-63 letters, digits or "_", starting with a letter, got "${raw}"`);
}

/** At least 16 visible ASCII characters (a bearer token in a header); the message never repeats it. */
const ADMIN_TOKEN_MIN_LENGTH = 16;
function adminToken(raw: string): string {
  if (raw.length >= ADMIN_TOKEN_MIN_LENGTH && /^[\x21-\x7e]+$/.test(raw)) return raw;
  throw new ConfigError(
    `ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} visible ASCII characters without spaces (e.g. openssl rand -hex 32); the value given is not repeated here`,
  );
}

function secretsKey(raw: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length === 32 && (/^[0-9a-f]{64}$/i.test(raw) || /^[A-Za-z0-9+/]{43}=$/.test(raw))) return key;
  throw new ConfigError(
    'WEBHOOK_SECRETS_KEY must be 32 bytes as base64 (44 characters) or 64 hex digits (e.g. openssl rand -base64 32); the value given is not repeated here',
  );
}

export const TRUST_PROXY_TRUE_WARNING =
  'TRUST_PROXY=true believes the left-most X-Forwarded-For address, which any client can write: a client that reaches this port directly can dodge the IP guard or get another address blocked. Set the number of proxies in front of the service (e.g. TRUST_PROXY=1) or their addresses instead.';

/** Does this listen address keep a listener on this machine (127.0.0.0/8, ::1, localhost)? */
function isLoopbackHost(h: string): boolean {
  const bare = h.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    bare === '0:0:0:0:0:0:0:1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) ||
    /^::ffff:127\./.test(bare)
  );
}

export function adminHostWarning(adminHost: string, pushOn: boolean): string {
  return `ADMIN_HOST=${adminHost} binds the admin listener beyond loopback: /metrics, /readyz${pushOn ? ' and the push endpoint (POST /admin/v1/articles)' : ''} can be reached from other machines. Keep it on 127.0.0.1 (the default), or make sure a firewall or private network stands in front of ADMIN_PORT.`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  for (const name of VARIABLES) {
    if (env[name] === '')
      throw new ConfigError(`${name} is set but empty; unset it to use the default, or give it a value`);
  }
  const brand = env.FNS_BRAND ?? 'fns';
  if (!/^[a-z][a-z0-9]{1,15}$/.test(brand))
    throw new ConfigError(`FNS_BRAND must be 2-16 lower-case letters or digits, got "${brand}"`);
  const cfg: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    dataDir: resolve(env.DATA_DIR ?? './data'),
    trustProxy: trustProxy(env.TRUST_PROXY),
    streamRecheckMs: int(env, 'STREAM_RECHECK_MS', 300_000, 10, 86_400_000),
    embeddingsTimeoutMs: int(env, 'EMBEDDINGS_TIMEOUT_MS', 5000, 100, 120_000),
    brand,
    validateResponses: bool(env, 'VALIDATE_RESPONSES'),
    ipGuardExempt: ipGuardExempt(env.IP_GUARD_EXEMPT),
    databaseSchema: identifier(env, 'DATABASE_SCHEMA', 'public'),
    redisPrefix: identifier(env, 'REDIS_PREFIX', 'fns'),
    adminHost: host(env.ADMIN_HOST, 'ADMIN_HOST') ?? '127.0.0.1',
    maxConnections: int(env, 'MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS, 0, 1_000_000),
    maxConnectionsPerAddress: 0,
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE'),
    feedAllowPrivate: bool(env, 'FEED_ALLOW_PRIVATE'),
    warnings: [],
  };
  // Behind a proxy every connection comes from the proxy's address: no per-address cap unless asked for.
  cfg.maxConnectionsPerAddress = int(
    env,
    'MAX_CONNECTIONS_PER_ADDRESS',
    cfg.trustProxy === false ? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS : 0,
    0,
    1_000_000,
  );
  if (env.ADMIN_PORT !== undefined) cfg.adminPort = int(env, 'ADMIN_PORT', 0, 0, 65535);
  if (env.ADMIN_TOKEN !== undefined) cfg.adminToken = adminToken(env.ADMIN_TOKEN);
  if (env.WEBHOOK_SECRETS_KEY !== undefined) cfg.webhookSecretsKey = secretsKey(env.WEBHOOK_SECRETS_KEY);
  if (cfg.trustProxy === true) cfg.warnings.push(TRUST_PROXY_TRUE_WARNING);
  if (cfg.adminPort !== undefined && !isLoopbackHost(cfg.adminHost))
    cfg.warnings.push(adminHostWarning(cfg.adminHost, cfg.adminToken !== undefined));
  const listenHost = host(env.HOST);
  if (listenHost !== undefined) cfg.host = listenHost;
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

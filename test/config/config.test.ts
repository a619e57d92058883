import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  loadConfig,
  TRUST_PROXY_TRUE_WARNING,
  adminHostWarning,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
} from '../../src/config/index.js';

describe('configuration from the environment, validated at start', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      trustProxy: false,
      streamRecheckMs: 300_000,
      embeddingsTimeoutMs: 5000,
      brand: 'fns',
      validateResponses: false,
      ipGuardExempt: [],
      warnings: [],
    });
    expect(c.host).toBeUndefined(); // each command's own default: serve on every interface, demo on loopback
    expect(c.dataDir).toMatch(/data$/);
  });
  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer between 0 and 65535, got "eighty"'],
    [{ STREAM_RECHECK_MS: '-5' }, 'STREAM_RECHECK_MS must be an integer between 10 and 86400000, got "-5"'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must use postgres or postgresql, got "mysql:"'],
    [{ EMBEDDINGS_URL: 'http://127.0.0.1:9/v1/embeddings' }, 'EMBEDDINGS_MODEL is required when EMBEDDINGS_URL is set'],
    [
      { TRUST_PROXY: 'yes please!' },
      'TRUST_PROXY must be true, false, a hop count or a list of trusted addresses, got "yes please!"',
    ],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY must be true, false, a hop count or a list of trusted addresses, got "yes"'],
    [
      { TRUST_PROXY: '1.2.3.4/99' },
      'TRUST_PROXY must be true, false, a hop count or a list of trusted addresses, got "1.2.3.4/99"',
    ],
    [
      { IP_GUARD_EXEMPT: 'loopback, 10.0.0.0/33' },
      'IP_GUARD_EXEMPT must be a comma-separated list of addresses, CIDR subnets or "loopback", got "10.0.0.0/33"',
    ],
    [{ VALIDATE_RESPONSES: 'yes' }, 'VALIDATE_RESPONSES must be true or false, got "yes"'],
    [{ HOST: 'not a host!' }, 'HOST must be an IP address or a host name to listen on, got "not a host!"'],
  ])('rejects %o with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new ConfigError(message));
  });
  it('reads TRUST_PROXY as on/off, a hop count or an address list', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe('loopback, 10.0.0.0/8');
  });
  it.each(['DATA_DIR', 'PORT', 'HOST', 'TRUST_PROXY', 'FNS_BRAND', 'IP_GUARD_EXEMPT', 'EMBEDDINGS_URL'])(
    'refuses %s set but empty instead of silently using a default',
    (name) => {
      expect(() => loadConfig({ [name]: '' })).toThrow(
        new ConfigError(`${name} is set but empty; unset it to use the default, or give it a value`),
      );
    },
  );
  it('reads IP_GUARD_EXEMPT as addresses, subnets and loopback', () => {
    expect(loadConfig({ IP_GUARD_EXEMPT: 'loopback, 10.0.0.0/8,2001:db8::1' }).ipGuardExempt).toEqual([
      'loopback',
      '10.0.0.0/8',
      '2001:db8::1',
    ]);
  });
  it('caps connections by default (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS), per address only without a proxy unless asked for', () => {
    expect(loadConfig({})).toMatchObject({
      maxConnections: DEFAULT_MAX_CONNECTIONS,
      maxConnectionsPerAddress: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    });
    expect(loadConfig({ TRUST_PROXY: '1' }).maxConnectionsPerAddress).toBe(0);
    expect(loadConfig({ TRUST_PROXY: '1', MAX_CONNECTIONS_PER_ADDRESS: '64' }).maxConnectionsPerAddress).toBe(64);
    expect(loadConfig({ MAX_CONNECTIONS: '0', MAX_CONNECTIONS_PER_ADDRESS: '0' })).toMatchObject({
      maxConnections: 0,
      maxConnectionsPerAddress: 0,
    });
    expect(() => loadConfig({ MAX_CONNECTIONS: 'lots' })).toThrow(
      new ConfigError('MAX_CONNECTIONS must be an integer between 0 and 1000000, got "lots"'),
    );
    expect(() => loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '-1' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_CONNECTIONS: '' })).toThrow(ConfigError);
  });
  it('warns at start when ADMIN_HOST binds the admin listener beyond loopback, not on loopback or without ADMIN_PORT', () => {
    expect(loadConfig({ ADMIN_PORT: '9090', ADMIN_HOST: '0.0.0.0' }).warnings).toEqual([
      adminHostWarning('0.0.0.0', false),
    ]);
    expect(loadConfig({ ADMIN_PORT: '9090', ADMIN_HOST: '10.1.2.3', ADMIN_TOKEN: 'x'.repeat(32) }).warnings).toEqual([
      adminHostWarning('10.1.2.3', true),
    ]);
    expect(adminHostWarning('10.1.2.3', true)).toMatch(/push endpoint/);
    expect(loadConfig({ ADMIN_PORT: '9090', ADMIN_HOST: '::' }).warnings).toHaveLength(1);
    for (const h of ['127.0.0.1', '127.9.8.7', '::1', 'localhost'])
      expect(loadConfig({ ADMIN_PORT: '9090', ADMIN_HOST: h }).warnings).toEqual([]);
    expect(loadConfig({ ADMIN_PORT: '9090' }).warnings).toEqual([]);
    expect(loadConfig({ ADMIN_HOST: '0.0.0.0' }).warnings).toEqual([]); // no admin listener
  });
  it('warns at start when TRUST_PROXY=true believes a client-written address, not for a hop count', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).warnings).toEqual([TRUST_PROXY_TRUE_WARNING]);
    expect(loadConfig({ TRUST_PROXY: '1' }).warnings).toEqual([]);
  });
});

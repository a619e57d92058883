/** The logger's line shapes, the terminal formatter, key scrubbing, and the ADMIN_* variables. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { createLogger, formatLine, scrubKeys } from '../../src/ops/logger.js';

function capture(pretty: boolean) {
  const lines: string[] = [];
  return { lines, logger: createLogger({ destination: { write: (l) => void lines.push(l) }, pretty }) };
}

describe('logger', () => {
  it('writes free text as a {msg} JSON line with level and ISO time', () => {
    const { lines, logger } = capture(false);
    logger.log('embedding: 3 articles embedded');
    expect(lines).toHaveLength(1);
    const o = JSON.parse(lines[0]!);
    expect(o).toMatchObject({ level: 'info', msg: 'embedding: 3 articles embedded' });
    expect(new Date(o.time).toISOString()).toBe(o.time);
  });

  it('logs a 5xx request at error level', () => {
    const { lines, logger } = capture(false);
    logger.request({ requestId: 'r1', method: 'GET', operation: 'listNews', status: 503, latencyMs: 1.23456 });
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'error',
      request_id: 'r1',
      status: 503,
      latency_ms: 1.235,
      operation: 'listNews',
    });
  });

  it('never writes a key or the header, even when asked to', () => {
    const { lines, logger } = capture(false);
    logger.pino.info(
      { key: 'fns_live_secretsecretsecret', headers: { 'x-api-key': 'fns_live_secretsecretsecret' } },
      'oops',
    );
    logger.log('failed for fns_live_secretsecretsecret and acme_test_Abc-_123456789');
    expect(lines.join('')).not.toContain('secretsecret');
    expect(lines.join('')).not.toContain('Abc-_123456789');
  });

  it('scrubs anything shaped like a key of any brand, and leaves key ids and text alone', () => {
    expect(scrubKeys('a fns_live_AbCdEf123456 b')).toBe('a [key redacted] b');
    expect(scrubKeys('x=acme_test_q-w_e123456789')).toBe('x=[key redacted]');
    expect(scrubKeys('key_3kqAbc account acct_9 fns_live_')).toBe('key_3kqAbc account acct_9 fns_live_');
  });

  it('writes one readable line per record on a terminal', () => {
    const { lines, logger } = capture(true);
    logger.request({
      requestId: 'abc',
      method: 'GET',
      operation: 'listNews',
      status: 200,
      latencyMs: 2.5,
      keyId: 'key_1',
    });
    logger.stream({ event: 'refused', connectionId: 'c1', code: 1008, reason: 'Invalid API key' });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO  GET listNews 200  kind=request request_id=abc method=GET operation=listNews status=200 latency_ms=2.5 key_id=key_1\n$/,
    );
    expect(lines[1]).toMatch(
      / INFO  stream refused 1008  kind=stream event=refused connection_id=c1 code=1008 reason="Invalid API key"\n$/,
    );
    expect(lines.join('')).not.toContain('{');
  });

  it('passes a line that is not JSON through as it is', () => {
    expect(formatLine('plain')).toBe('plain\n');
  });
});

describe('logger on a terminal: outside text is escaped, one line per record', () => {
  /** Every character a terminal acts on, and the line breaks. */
  const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  const HOSTILE = 'feed \x1b]0;pwned\x07 \x1b[2J\u009b31m cut\r\nfns: forged\u2028\u202e';

  it('escapes the message, every field value and name, so a record is one line with no control character', () => {
    const { lines, logger } = capture(true);
    logger.log(`poll failed: ${HOSTILE}`);
    logger.stream({ event: 'refused', connectionId: HOSTILE, code: 1008, reason: HOSTILE });
    logger.pino.warn({ error: HOSTILE, plain: 'x\x1bq', [`k${HOSTILE}`]: 1, nested: { v: HOSTILE } }, 'webhook failed');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.endsWith('\n')).toBe(true);
      expect(line.slice(0, -1)).not.toMatch(RAW);
    }
    expect(lines[0]).toContain(
      'poll failed: feed \\x1b]0;pwned\\x07 \\x1b[2J\\x9b31m cut\\r\\nfns: forged\\u2028\\u202e',
    );
    // A value with a character to escape is written as a JSON string, the same value when read back.
    const reason = /reason=("(?:[^"\\]|\\.)*")/.exec(lines[1]!)![1]!;
    expect(JSON.parse(reason)).toBe(HOSTILE);
    expect(lines[2]).toContain('plain="x\\u001bq"');
  });

  it('escapes a line that is not JSON', () => {
    expect(formatLine(`oops ${HOSTILE}\n`)).toBe(
      'oops feed \\x1b]0;pwned\\x07 \\x1b[2J\\x9b31m cut\\r\\nfns: forged\\u2028\\u202e\n',
    );
  });
});

describe('ADMIN_PORT and ADMIN_HOST', () => {
  it('has no admin listener by default, loopback as the default host', () => {
    const c = loadConfig({});
    expect(c.adminPort).toBeUndefined();
    expect(c.adminHost).toBe('127.0.0.1');
  });

  it('reads a port and a host', () => {
    expect(loadConfig({ ADMIN_PORT: '9090', ADMIN_HOST: '0.0.0.0' })).toMatchObject({
      adminPort: 9090,
      adminHost: '0.0.0.0',
    });
    expect(loadConfig({ ADMIN_PORT: '0' }).adminPort).toBe(0);
  });

  it('refuses bad and empty values with the variable name', () => {
    expect(() => loadConfig({ ADMIN_PORT: '70000' })).toThrow(/ADMIN_PORT must be an integer between 0 and 65535/);
    expect(() => loadConfig({ ADMIN_PORT: 'x' })).toThrow(ConfigError);
    expect(() => loadConfig({ ADMIN_PORT: '' })).toThrow(/ADMIN_PORT is set but empty/);
    expect(() => loadConfig({ ADMIN_HOST: 'not a host!' })).toThrow(/ADMIN_HOST must be an IP address or a host name/);
    expect(() => loadConfig({ ADMIN_HOST: '' })).toThrow(/ADMIN_HOST is set but empty/);
  });
});

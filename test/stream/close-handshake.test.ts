/**
 * A refused stream keeps the contract's answer (101, then close 1008 with the reason text clients rely
 * on), and a peer that ignores the close frame is cut off within CLOSE_HANDSHAKE_MS: an upgrade
 * refused at admission no longer holds its socket for ws's default 30 s.
 */
import { randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { asyncapiPath, stream, streamAddress } from '../../src/contract/index.js';
import { CLOSE_HANDSHAKE_MS } from '../../src/stream/index.js';
import { LIVE, useStreamHarness } from './support.js';

/** A raw WebSocket handshake that never answers anything: what the server sent, and when it closed the socket. */
function deafUpgrade(
  port: number,
  query: string,
  ip: string,
): Promise<{ head: string; close?: { code: number; reason: string }; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let data = Buffer.alloc(0);
    const s = netConnect({ port, host: '127.0.0.1', localAddress: ip }, () => {
      s.write(
        `GET ${streamAddress}?${query} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    s.on('data', (d) => (data = Buffer.concat([data, d])));
    s.on('error', reject);
    s.on('close', () => {
      const end = data.indexOf('\r\n\r\n');
      const head = data.subarray(0, end).toString();
      const frame = data.subarray(end + 4);
      // An unmasked server close frame: 0x88, payload length (< 126), 2-byte code, reason.
      const close =
        frame[0] === 0x88
          ? { code: frame.readUInt16BE(2), reason: frame.subarray(4, 2 + (frame[1]! & 0x7f)).toString() }
          : undefined;
      resolve({ head, ...(close ? { close } : {}), closedAfterMs: performance.now() - t0 });
    });
  });
}

describe("the close-handshake bound is the contract's", () => {
  it('CLOSE_HANDSHAKE_MS is x-stream closeHandshakeSeconds, and the description says that many seconds', () => {
    expect(CLOSE_HANDSHAKE_MS).toBe(stream.closeHandshakeSeconds * 1000);
    const asyncapi = JSON.parse(readFileSync(asyncapiPath, 'utf8'));
    expect(asyncapi.info.description).toContain(
      `within ${stream.closeHandshakeSeconds} seconds, after any close it starts`,
    );
  });
});

describe('a peer that ignores the close frame of a refused stream is cut off within the close handshake bound', () => {
  const ctx = useStreamHarness();

  it.each([
    ['an invalid key', async () => `${LIVE}unknown0000000000000000`, stream.closeCodes.invalidKey],
    ['a starter key', async () => (await ctx.h.key('starter')).key, stream.closeCodes.planRequired],
  ])(
    '%s: 101, close 1008 with the contract reason, socket gone within CLOSE_HANDSHAKE_MS',
    async (_what, key, expected) => {
      const r = await deafUpgrade(ctx.h.port, `api_key=${encodeURIComponent(await key())}`, '127.93.0.1');
      expect(r.head).toMatch(/^HTTP\/1\.1 101 /);
      expect(r.close).toEqual(expected);
      // ws's default was 30 s; the bound leaves room for a loaded machine, far below that.
      expect(r.closedAfterMs).toBeGreaterThanOrEqual(CLOSE_HANDSHAKE_MS - 100);
      expect(r.closedAfterMs).toBeLessThan(CLOSE_HANDSHAKE_MS + 5000);
    },
  );
});

/**
 * Connections held open are bounded: per client address and in total, a connection
 * over a cap is answered at once with a 503 problem + Retry-After and closed (a WebSocket handshake
 * sees that 503 too); a connection that sends nothing is closed by the head timeout. Distinct client
 * addresses are 127.x.y.z source addresses on loopback.
 */
import { connect as netConnect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { limits, problems, streamAddress } from '../../src/contract/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { createHttpServer, type HttpServerOptions } from '../../src/http/server.js';
import { createLogger } from '../../src/ops/logger.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { startService } from '../../src/server/index.js';
import { TrigramEmbedder } from '../support/service.js';

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

const refused: string[] = [];
async function start(options: HttpServerOptions): Promise<number> {
  refused.length = 0;
  server = createHttpServer((_req, res) => res.end('ok'), {
    ...options,
    onConnectionRefused: (cap) => void refused.push(cap),
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

/** An idle TCP connection from `ip`, resolved once the server has taken it (it answers nothing yet). */
function idle(port: number, ip: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect({ port, host: '127.0.0.1', localAddress: ip }, () => resolve(s));
    s.on('error', reject);
    sockets.push(s);
  });
}

/** One GET over a fresh connection from `ip`: the raw answer once the server closed or answered. */
function rawGet(port: number, ip: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const s = netConnect({ port, host: '127.0.0.1', localAddress: ip }, () =>
      s.write('GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
    );
    sockets.push(s);
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => resolve(out));
    s.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? resolve(out) : reject(e)));
  });
}

/** The server's own count of open connections reaches `n` (the connection event has run). */
async function serverHolds(n: number): Promise<void> {
  for (;;) {
    const count = await new Promise<number>((r) => server!.getConnections((_e, c) => r(c)));
    if (count >= n) return;
    await new Promise((r) => setImmediate(r));
  }
}

function expectAtCapacity(raw: string): void {
  expect(raw).toMatch(/^HTTP\/1\.1 503 /);
  expect(raw).toContain(`Retry-After: ${limits.unavailableRetryAfterSeconds}\r\n`);
  expect(raw).toContain('Connection: close\r\n');
  expect(raw).toContain('Content-Type: application/problem+json\r\n');
  expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual(problems.serviceUnavailable);
}

describe('connections per client address are capped', () => {
  it('answers the connection over the cap with 503 + Retry-After and closes it; other addresses are served; a freed place is taken again', async () => {
    const port = await start({ maxConnectionsPerAddress: 3 });
    const held = [await idle(port, '127.94.0.1'), await idle(port, '127.94.0.1'), await idle(port, '127.94.0.1')];
    await serverHolds(3);
    expectAtCapacity(await rawGet(port, '127.94.0.1'));
    expect(refused).toEqual(['per_address']);
    expect(await rawGet(port, '127.94.0.2')).toMatch(/^HTTP\/1\.1 200 /);
    held[0]!.destroy();
    await new Promise((r) => held[0]!.once('close', r));
    // The server sees the close asynchronously: the next connection from the address is served once it has.
    let answer = await rawGet(port, '127.94.0.1');
    for (let i = 0; i < 50 && !answer.startsWith('HTTP/1.1 200'); i++) answer = await rawGet(port, '127.94.0.1');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a WebSocket handshake over the cap gets the 503 with Retry-After as its answer', async () => {
    const port = await start({ maxConnectionsPerAddress: 1 });
    await idle(port, '127.94.1.1');
    await serverHolds(1);
    const ws = new WebSocket(`ws://127.0.0.1:${port}${streamAddress}?api_key=x`, { localAddress: '127.94.1.1' });
    const status = await new Promise<{ code: number; retryAfter: string | undefined }>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) =>
        resolve({ code: res.statusCode!, retryAfter: res.headers['retry-after'] }),
      );
      ws.once('open', () => reject(new Error('opened')));
      ws.on('error', () => {});
    });
    expect(status).toEqual({ code: 503, retryAfter: String(limits.unavailableRetryAfterSeconds) });
  });
});

describe('connections in total are capped', () => {
  it('answers any address over the total cap with 503 + Retry-After', async () => {
    const port = await start({ maxConnections: 4, maxConnectionsPerAddress: 3 });
    for (const ip of ['127.95.0.1', '127.95.0.1', '127.95.0.2', '127.95.0.3']) await idle(port, ip);
    await serverHolds(4);
    expectAtCapacity(await rawGet(port, '127.95.0.9'));
    expect(refused).toEqual(['total']);
  });

  it('without caps, as many connections as asked for are served (the caps are what refused above)', async () => {
    const port = await start({});
    for (let i = 0; i < 8; i++) await idle(port, '127.95.1.1');
    await serverHolds(8);
    expect(await rawGet(port, '127.95.1.1')).toMatch(/^HTTP\/1\.1 200 /);
    expect(refused).toEqual([]);
  });
});

describe('a connection that sends nothing is closed by the head timeout', () => {
  it('closes an idle connection with a 408 problem within the head timeout and the check interval', async () => {
    const port = await start({ headersTimeoutMs: 300, requestTimeoutMs: 300, checkIntervalMs: 100 });
    const s = await idle(port, '127.96.0.1');
    const t0 = performance.now();
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    await new Promise((r) => s.once('close', r));
    const ms = performance.now() - t0;
    expect(out).toMatch(/^HTTP\/1\.1 408 /);
    expect(ms).toBeGreaterThanOrEqual(250);
    // Node's defaults (60 s head timeout, checked every 30 s) held such connections for 76 s.
    expect(ms).toBeLessThan(5000);
  });
});

describe('the service applies MAX_CONNECTIONS_PER_ADDRESS and counts the refusals', () => {
  it('refuses the third connection from one address with MAX_CONNECTIONS_PER_ADDRESS=2 and counts it in fns_connection_refusals_total', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fns-caps-'));
    const svc = await startService(
      loadConfig({
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        MAX_CONNECTIONS_PER_ADDRESS: '2',
      }),
      {
        logger: createLogger({ destination: { write: () => {} }, pretty: false }),
        metrics: createMetrics({ defaultMetrics: false }),
        embedder: new TrigramEmbedder(),
        pollSources: false,
      },
    );
    try {
      const port = Number(new URL(svc.url).port);
      await idle(port, '127.97.0.1');
      await idle(port, '127.97.0.1');
      for (;;) {
        const n = await new Promise<number>((r) => svc.server.getConnections((_e, c) => r(c)));
        if (n >= 2) break;
        await new Promise((r) => setImmediate(r));
      }
      expectAtCapacity(await rawGet(port, '127.97.0.1'));
      const metrics = await (await fetch(`${svc.adminUrl}/metrics`)).text();
      expect(metrics).toMatch(/^fns_connection_refusals_total\{cap="per_address"\} 1$/m);
      expect(metrics).toMatch(/^fns_connection_refusals_total\{cap="total"\} 0$/m);
    } finally {
      for (const s of sockets.splice(0)) s.destroy();
      await svc.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

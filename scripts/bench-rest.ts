/**
 * `npm run bench:rest`: GET /v1/news (limit=50, a max key, 100,000 archived articles) under load with
 * autocannon, next to a raw node:http server returning the same body, in the same run.
 *
 * The service is built with createApp() exactly as in production (auth, IP guard, validation, SQLite
 * query, JSON), except for the rate limiter: a real max key is admitted 60 times a minute, so the
 * bench uses a limiter that admits every request (it still sets the rate-limit headers).
 * autocannon runs in a child process so it does not share the servers' event loop.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { limits } from '../src/contract/index.js';
import { createApp } from '../src/http/app.js';
import { seedArchive } from './lib/archive.js';
import { createKey } from '../src/cli/operator.js';
import { AdmitAllRateLimiter, MemoryIpGuard } from '../src/state/memory.js';
import { SqliteStore } from '../src/store/sqlite.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const ARCHIVE = Number(process.env.BENCH_ARCHIVE ?? 100_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const run = promisify(execFile);

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

async function load(url: string, key: string): Promise<{ rps: number; p50: number; p99: number; non2xx: number }> {
  const { stdout } = await run(join(root, 'node_modules', '.bin', 'autocannon'), ['-j', '-c', String(CONNECTIONS), '-d', String(DURATION), '-H', `X-API-Key=${key}`, url], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const r = JSON.parse(stdout);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fns-bench-'));
  const store = new SqliteStore(join(dir, 'fns.sqlite'));
  try {
    const now = Date.now();
    process.stdout.write(`bench:rest: seeding ${ARCHIVE.toLocaleString()} articles `);
    await seedArchive(store, ARCHIVE, { now, batch: 10_000, onBatch: () => process.stdout.write('.') });
    console.log(` ${await store.count()} stored`);
    const key = (await createKey(store, { tier: 'max', livePrefix: limits.keyPrefixes.live, now })).key;

    const app = createApp({
      accounts: store,
      articles: store,
      search: { search: async () => [] },
      rateLimiter: new AdmitAllRateLimiter(),
      ipGuard: new MemoryIpGuard(limits.ipGuard),
      livePrefix: limits.keyPrefixes.live,
      clock: Date.now,
      trustProxy: false,
      validateResponses: false,
    });
    const service = createServer(app);
    const servicePort = await listen(service);
    const path = '/v1/news?limit=50';
    const probe = await fetch(`http://127.0.0.1:${servicePort}${path}`, { headers: { 'X-API-Key': key } });
    const body = await probe.text();
    const parsed = JSON.parse(body);
    if (probe.status !== 200 || parsed.count !== 50) throw new Error(`probe failed: ${probe.status} ${body.slice(0, 200)}`);
    console.log(`bench:rest: response ${body.length} bytes, ${parsed.count} articles; ${CONNECTIONS} connections, ${DURATION} s each`);

    const raw = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
    const rawPort = await listen(raw);

    console.log('bench:rest: warming up (2 s each)');
    await run(join(root, 'node_modules', '.bin', 'autocannon'), ['-c', '4', '-d', '2', '-H', `X-API-Key=${key}`, `http://127.0.0.1:${servicePort}${path}`]);
    console.log('bench:rest: raw node:http ...');
    const r = await load(`http://127.0.0.1:${rawPort}${path}`, key);
    console.log('bench:rest: service ...');
    const s = await load(`http://127.0.0.1:${servicePort}${path}`, key);
    if (s.non2xx > 0) throw new Error(`service answered ${s.non2xx} non-2xx responses during the bench`);

    console.log('\n| server | req/s | p50 ms | p99 ms |');
    console.log('|---|---|---|---|');
    console.log(`| raw node:http (same body) | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} |`);
    console.log(`| service GET /v1/news | ${s.rps.toFixed(0)} | ${s.p50} | ${s.p99} |`);
    console.log(`\nservice/raw throughput ratio: ${(s.rps / r.rps).toFixed(3)}; p99 ratio: ${(s.p99 / Math.max(r.p99, 1)).toFixed(2)}x`);
    service.close();
    raw.close();
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

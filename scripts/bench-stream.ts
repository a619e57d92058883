/**
 * Stream benchmark: the real firehose (src/stream) against a plain `ws` broadcast loop, on loopback.
 *
 *   npx tsx scripts/bench-stream.ts [--sizes=1000,5000] [--burst=200] [--rounds=3] [--poll-ms=100] [--deadline-s=600]
 *
 * This process runs the servers; a forked child process runs the clients, so that the memory measured
 * here is the server's. For each size N:
 *   1. stream: N pro accounts (one key each, made directly in a temp SQLite store) connect from distinct
 *      127.0.x.y addresses (the IP guard sees one key per address); `rounds` bursts of `burst` articles
 *      are inserted through a second store instance on the same file (like `fns articles ingest`);
 *      latency = insert time → client receive time (includes the feed poll interval).
 *   2. raw ws: N clients on a plain WebSocketServer; the same articles are serialised once each and
 *      sent with `client.send()` to every client in a loop; latency = loop start → client receive.
 * Memory per connection = (heap + external + array buffers after connecting − before) / N, after GC;
 * RSS delta too (noisier: freed memory is not always returned to the OS).
 */
import { fork, execSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocket, WebSocketServer } from 'ws';

const now = (): number => performance.timeOrigin + performance.now();

/** Client address for connection i: spread over 127.0.x.y (one key per address, ports to spare). */
const clientAddress = (i: number): string => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

type ToChild =
  | { type: 'open'; urls: string[] }
  | { type: 'expect'; perClient: number; timeoutMs: number }
  | { type: 'closeAll' };
type FromChild =
  | { type: 'progress'; opened: number; total: number }
  | { type: 'opened'; opened: number; failed: number; errors: string[] }
  | { type: 'latency'; latencies: Float64Array; received: number; expected: number }
  | { type: 'closed' };

// ================================================================ the clients (child process)

async function clientMain(): Promise<void> {
  let clients: WebSocket[] = [];
  let latencies = new Float64Array(0);
  let count = 0;
  let expected = 0;
  let onAll: (() => void) | undefined;
  const send = (m: FromChild) => process.send!(m);
  const MARK = '"content":"bench ';

  const onMessage = (data: Buffer): void => {
    const at = now();
    const s = data.toString('latin1', 0, Math.min(data.length, 512));
    const i = s.indexOf(MARK);
    if (i !== -1 && count < latencies.length) latencies[count] = at - parseFloat(s.slice(i + MARK.length, i + MARK.length + 24));
    count++;
    if (count === expected) onAll?.();
  };

  process.on('message', async (m: ToChild) => {
    if (m.type === 'open') {
      const errors = new Set<string>();
      let opened = 0;
      let failed = 0;
      const BATCH = 250;
      for (let start = 0; start < m.urls.length; start += BATCH) {
        const batch = m.urls.slice(start, start + BATCH).map(
          (url, j) =>
            new Promise<void>((resolve) => {
              const ws = new WebSocket(url, { localAddress: clientAddress(start + j), perMessageDeflate: false });
              ws.on('message', onMessage);
              ws.once('open', () => {
                opened++;
                clients.push(ws);
                resolve();
              });
              ws.once('close', (code, reason) => {
                if (ws.readyState !== WebSocket.CLOSED) return;
                if (!clients.includes(ws)) {
                  failed++;
                  errors.add(`closed ${code} ${reason.toString()}`);
                }
                resolve();
              });
              ws.on('error', (e: NodeJS.ErrnoException) => {
                errors.add(e.code ?? e.message);
                failed++;
                resolve();
              });
            }),
        );
        await Promise.all(batch);
        send({ type: 'progress', opened, total: m.urls.length });
      }
      send({ type: 'opened', opened, failed, errors: [...errors] });
    } else if (m.type === 'expect') {
      expected = clients.length * m.perClient;
      latencies = new Float64Array(expected);
      count = 0;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, m.timeoutMs);
        onAll = () => {
          clearTimeout(t);
          resolve();
        };
        if (count >= expected) onAll();
      });
      onAll = undefined;
      send({ type: 'latency', latencies: latencies.slice(0, Math.min(count, expected)), received: count, expected });
    } else if (m.type === 'closeAll') {
      await Promise.all(
        clients.map(
          (ws) =>
            new Promise<void>((r) => {
              if (ws.readyState === WebSocket.CLOSED) return r();
              ws.once('close', () => r());
              ws.close(1000);
              setTimeout(() => {
                ws.terminate();
                r();
              }, 5000).unref();
            }),
        ),
      );
      clients = [];
      send({ type: 'closed' });
    }
  });
}

// ================================================================ the servers (this process)

interface Row {
  n: number;
  impl: 'stream' | 'raw ws';
  p50: number;
  p99: number;
  max: number;
  delivered: string;
  heapPerConnKb: number;
  rssPerConnKb: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

class Child {
  private readonly proc: ChildProcess;
  private waiting: ((m: FromChild) => void) | undefined;
  constructor() {
    this.proc = fork(fileURLToPath(import.meta.url), ['--client'], { serialization: 'advanced', stdio: 'inherit' });
    this.proc.on('message', (m: FromChild) => {
      if (m.type === 'progress') {
        if (m.opened % 1000 === 0 || m.opened === m.total) process.stdout.write(`    ${m.opened}/${m.total} open\n`);
        return;
      }
      const w = this.waiting;
      this.waiting = undefined;
      w?.(m);
    });
  }
  ask<T extends FromChild['type']>(m: ToChild, reply: T, timeoutMs: number): Promise<Extract<FromChild, { type: T }>> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`client process: no '${reply}' within ${timeoutMs} ms`)), timeoutMs);
      this.waiting = (r) => {
        clearTimeout(t);
        if (r.type === reply) resolve(r as Extract<FromChild, { type: T }>);
        else reject(new Error(`client process: expected ${reply}, got ${r.type}`));
      };
      this.proc.send(m);
    });
  }
  kill(): void {
    this.proc.kill();
  }
}

function memory(gc: () => void): { heap: number; rss: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external + m.arrayBuffers, rss: m.rss };
}

async function serverMain(): Promise<void> {
  const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
  const sizes = arg('sizes', '1000,5000').split(',').map(Number);
  const burst = Number(arg('burst', '200'));
  const rounds = Number(arg('rounds', '3'));
  const deadlineMs = Number(arg('deadline-s', '600')) * 1000;
  const pollMs = Number(arg('poll-ms', '100'));
  const maxN = Math.max(...sizes);
  const rows: Row[] = [];
  const printTable = () => {
    const header = ['connections', 'impl', 'p50 ms', 'p99 ms', 'max ms', 'delivered', 'mem/conn KB (heap+ext)', 'RSS/conn KB'];
    const lines = [header];
    for (const r of rows) {
      lines.push([String(r.n), r.impl, r.p50.toFixed(1), r.p99.toFixed(1), r.max.toFixed(1), r.delivered, r.heapPerConnKb.toFixed(1), r.rssPerConnKb.toFixed(1)]);
    }
    for (const n of sizes) {
      const s = rows.find((r) => r.n === n && r.impl === 'stream');
      const w = rows.find((r) => r.n === n && r.impl === 'raw ws');
      if (!s || !w) continue;
      const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a');
      lines.push([String(n), 'stream/raw', ratio(s.p50, w.p50), ratio(s.p99, w.p99), ratio(s.max, w.max), '', ratio(s.heapPerConnKb, w.heapPerConnKb), ratio(s.rssPerConnKb, w.rssPerConnKb)]);
    }
    const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
    console.log('');
    for (const [k, l] of lines.entries()) {
      console.log(l.map((c, i) => c.padStart(widths[i]!)).join(' | '));
      if (k === 0) console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
    }
  };

  let ulimit = NaN;
  try {
    ulimit = Number(execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim());
  } catch {
    /* unknown */
  }
  const needFds = maxN + 500;
  console.log(`bench-stream: sizes ${sizes.join(', ')}, burst ${burst} articles x ${rounds} rounds, feed poll ${pollMs} ms, open files limit ${Number.isNaN(ulimit) ? 'unknown' : ulimit}`);
  if (ulimit < needFds) console.log(`  warning: each process needs about ${needFds} file descriptors; raise the limit first, e.g. \`ulimit -n 65536\``);

  const watchdog = setTimeout(() => {
    console.log(`\nbench-stream: deadline of ${deadlineMs / 1000} s reached; partial results:`);
    printTable();
    process.exit(2);
  }, deadlineMs);
  watchdog.unref();

  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  const { SqliteStore } = await import('../src/store/sqlite.js');
  const { createKey } = await import('../src/cli/operator.js');
  const { limits, streamAddress } = await import('../src/contract/index.js');
  const { MemoryIpGuard } = await import('../src/state/memory.js');
  const { attachStream, MemoryStreamSlots } = await import('../src/stream/index.js');

  const dir = mkdtempSync(join(tmpdir(), 'fns-bench-stream-'));
  const file = join(dir, 'fns.sqlite');
  const store = new SqliteStore(file);
  const cli = new SqliteStore(file);
  const child = new Child();
  let server: Server | undefined;
  let emfile = false;

  try {
    console.log(`creating ${maxN} pro accounts with one key each...`);
    const LIVE = 'fns_live_';
    const keys: string[] = [];
    store.db.exec('BEGIN');
    for (let i = 0; i < maxN; i++) keys.push((await createKey(store, { tier: 'pro', livePrefix: LIVE, now: Date.now() })).key);
    store.db.exec('COMMIT');

    server = createServer((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    server.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EMFILE') emfile = true;
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const slots = new MemoryStreamSlots();
    const handle = attachStream(server, {
      accounts: store,
      articles: store,
      ipGuard: new MemoryIpGuard(limits.ipGuard),
      livePrefix: LIVE,
      clock: Date.now,
      trustProxy: false,
      slots,
      recheckMs: 300_000,
      feedPollMs: pollMs,
    });
    await handle.ready;

    const article = (i: number, t: number) => ({
      content: `bench ${t.toFixed(3)} Central bank signals a pause as inflation cools; markets price in cuts for next year (${i})`,
      urgency: 'breaking' as const,
      sentiment: 'dovish' as const,
      published_at: null,
      tickers: [{ ticker: 'SPY', sentiment: 'positive' as const }],
    });

    const collect = async (n: number, run: () => Promise<void> | void): Promise<{ lat: Float64Array; received: number; expected: number }> => {
      const all: Float64Array[] = [];
      let received = 0;
      let expected = 0;
      for (let r = 0; r < rounds; r++) {
        const answer = child.ask({ type: 'expect', perClient: burst, timeoutMs: 60_000 }, 'latency', 90_000);
        await new Promise((res) => setTimeout(res, 50 + Math.random() * 100));
        await run();
        const got = await answer;
        all.push(got.latencies);
        received += got.received;
        expected += got.expected;
        process.stdout.write(`    round ${r + 1}/${rounds}: ${got.received}/${got.expected} messages\n`);
      }
      const lat = new Float64Array(all.reduce((s, a) => s + a.length, 0));
      let o = 0;
      for (const a of all) {
        lat.set(a, o);
        o += a.length;
      }
      lat.sort();
      void n;
      return { lat, received, expected };
    };

    const row = (n: number, impl: Row['impl'], res: { lat: Float64Array; received: number; expected: number }, mem: { heap: number; rss: number }) => {
      rows.push({
        n,
        impl,
        p50: percentile(res.lat, 50),
        p99: percentile(res.lat, 99),
        max: res.lat.length ? res.lat[res.lat.length - 1]! : NaN,
        delivered: `${res.received}/${res.expected}`,
        heapPerConnKb: mem.heap / n / 1024,
        rssPerConnKb: mem.rss / n / 1024,
      });
    };

    const checkOpened = (o: { opened: number; failed: number; errors: string[] }, n: number) => {
      if (o.errors.some((e) => e.includes('EMFILE')) || emfile) {
        console.log('  EMFILE: too many open files. Raise the limit (e.g. `ulimit -n 65536`) and run again.');
      }
      if (o.opened < n) throw new Error(`only ${o.opened}/${n} connections opened (${o.failed} failed: ${o.errors.slice(0, 5).join('; ')})`);
    };

    for (const n of sizes) {
      // ---- the stream ----
      console.log(`\n[stream, ${n} connections] opening...`);
      const before = memory(gc);
      const url = (k: string) => `ws://127.0.0.1:${port}${streamAddress}?api_key=${encodeURIComponent(k)}`;
      checkOpened(await child.ask({ type: 'open', urls: keys.slice(0, n).map(url) }, 'opened', 180_000), n);
      if (handle.connections() !== n) throw new Error(`stream admitted ${handle.connections()} of ${n}`);
      await new Promise((r) => setTimeout(r, 500));
      const after = memory(gc);
      console.log(`[stream, ${n}] ${rounds} bursts of ${burst} articles inserted by a second store instance...`);
      const res = await collect(n, async () => {
        const t = now();
        await cli.insert(
          Array.from({ length: burst }, (_, i) => article(i, t)),
          Date.now(),
        );
      });
      row(n, 'stream', res, { heap: after.heap - before.heap, rss: after.rss - before.rss });
      await child.ask({ type: 'closeAll' }, 'closed', 60_000);
      const deadline = Date.now() + 30_000;
      while ((handle.connections() > 0 || slots.inUse() > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

      // ---- raw ws broadcast loop ----
      console.log(`[raw ws, ${n} connections] opening...`);
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
      await new Promise<void>((r) => wss.once('listening', () => r()));
      const rawPort = (wss.address() as AddressInfo).port;
      const rawBefore = memory(gc);
      checkOpened(await child.ask({ type: 'open', urls: Array.from({ length: n }, () => `ws://127.0.0.1:${rawPort}/`) }, 'opened', 180_000), n);
      await new Promise((r) => setTimeout(r, 500));
      const rawAfter = memory(gc);
      console.log(`[raw ws, ${n}] ${rounds} bursts of ${burst} messages, send() to every client...`);
      const rawRes = await collect(n, () => {
        const t = now();
        for (let i = 0; i < burst; i++) {
          const payload = JSON.stringify({ id: `01J${String(i).padStart(23, '0')}`, ...article(i, t), received_at: new Date().toISOString() });
          for (const c of wss.clients) c.send(payload);
        }
      });
      row(n, 'raw ws', rawRes, { heap: rawAfter.heap - rawBefore.heap, rss: rawAfter.rss - rawBefore.rss });
      await child.ask({ type: 'closeAll' }, 'closed', 60_000);
      await new Promise<void>((r) => wss.close(() => r()));
      printTable();
    }
    await handle.close();
  } catch (e) {
    console.log(`\nbench-stream: ${e instanceof Error ? e.message : String(e)}`);
    if (emfile || String(e).includes('EMFILE')) console.log('  EMFILE: raise the open files limit, e.g. `ulimit -n 65536`.');
    process.exitCode = 1;
  } finally {
    child.kill();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    store.close();
    cli.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('\nFinal results:');
  printTable();
  console.log(
    '\nLatency is time from insert (stream) or send loop start (raw ws) to receipt in the client process; the stream\n' +
      `figure includes waiting for the next feed poll (${pollMs} ms interval). Memory is this process only (clients run in a child).`,
  );
}

if (process.argv.includes('--client')) void clientMain();
else await serverMain();

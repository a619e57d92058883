/**
 * Stream benchmark (against the stream's performance goals): the real firehose (src/stream) on loopback, woken the way
 * `fns serve` wakes it on SQLite (a watch on the data directory, 500 ms safety timer), its clients in a
 * forked child process, which is also the writer (like `fns articles ingest`: another process commits
 * to the same SQLite file).
 *
 *   npx tsx scripts/bench-stream.ts [--clients=5000] [--rounds=20] [--burst=200] [--cli-runs=9] [--idle-s=5]
 *   [--deadline-s=170]
 *
 * Each figure is printed next to its goal, all measured in this one run:
 *   1. one client: `received_at` → receipt, for single articles committed by the child process (p50/p99),
 *      and for articles stored by this process followed by `StreamHandle.wake()` (in-process publish);
 *   2. `fns articles ingest` start (spawn of `node bin/fns.mjs`) → receipt by the client, p50;
 *   3. N clients, fan-out in time slices (today's code), then N clients with the fan-out as one
 *      synchronous loop (`fanOutSliceMs: Infinity`, how it was before), then a plain `ws` server sending
 *      the same article to N clients in a loop (the floor the client process sets): per round, the
 *      latency of the last of the N clients; the longest event loop stall while articles go out
 *      (perf_hooks monitorEventLoopDelay, 1 ms resolution, in this process); idle CPU with N clients
 *      connected; one burst of `burst` articles (p50/p99 over every receipt); memory per connection.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, watch } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocket, WebSocketServer } from 'ws';
import type { NewArticle } from '../src/store/ports/index.js';

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Client address for connection i: spread over 127.0.x.y (the IP guard sees one key per address). */
const clientAddress = (i: number): string => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

const RECEIVED = '"received_at":"';

type ToChild =
  | { type: 'open'; urls: string[] }
  | { type: 'arm'; perClient: number; timeoutMs: number; write?: { file: string; count: number } }
  | { type: 'closeAll' };
type FromChild =
  | { type: 'progress'; opened: number; total: number }
  | { type: 'opened'; opened: number; failed: number; errors: string[] }
  | { type: 'armed' }
  /** lat: receipt − received_at per message (ms); receipts: absolute receipt times (ms since the epoch). */
  | { type: 'result'; lat: Float64Array; receipts: Float64Array; received: number; expected: number }
  | { type: 'closed' };

const article = (i: number) => ({
  content: `bench ${i} Central bank signals a pause as inflation cools; markets price in cuts for next year`,
  urgency: 'breaking' as const,
  sentiment: 'dovish' as const,
  published_at: null,
  tickers: [{ ticker: 'SPY', sentiment: 'positive' as const }],
});

// ================================================================ the clients and the writer (child process)

async function clientMain(): Promise<void> {
  let clients: WebSocket[] = [];
  let lat = new Float64Array(0);
  let receipts = new Float64Array(0);
  let count = 0;
  let expected = 0;
  let onAll: (() => void) | undefined;
  let writer: { articles: { insert(a: NewArticle[], at: () => number): Promise<unknown> }; close(): void } | undefined;
  let writerFile = '';
  let seq = 0;
  const send = (m: FromChild) => process.send!(m);

  const onMessage = (data: Buffer): void => {
    const at = now();
    if (count < lat.length) {
      const s = data.toString('latin1', 0, Math.min(data.length, 1024));
      const i = s.indexOf(RECEIVED);
      lat[count] = i === -1 ? NaN : at - Date.parse(s.slice(i + RECEIVED.length, s.indexOf('"', i + RECEIVED.length)));
      receipts[count] = at;
    }
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
    } else if (m.type === 'arm') {
      expected = clients.length * m.perClient;
      lat = new Float64Array(expected);
      receipts = new Float64Array(expected);
      count = 0;
      const all = new Promise<void>((resolve) => {
        const t = setTimeout(resolve, m.timeoutMs);
        onAll = () => {
          clearTimeout(t);
          resolve();
        };
      });
      send({ type: 'armed' });
      if (m.write) {
        if (writerFile !== m.write.file) {
          const { SqliteStore } = await import('../src/store/sqlite/index.js');
          writer?.close();
          writer = new SqliteStore(m.write.file);
          writerFile = m.write.file;
        }
        await writer!.articles.insert(
          Array.from({ length: m.write.count }, () => article(++seq)),
          Date.now,
        );
      }
      await all;
      onAll = undefined;
      const n = Math.min(count, expected);
      send({ type: 'result', lat: lat.slice(0, n), receipts: receipts.slice(0, n), received: count, expected });
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

class Child {
  private readonly proc: ChildProcess;
  private readonly waiting = new Map<string, (m: FromChild) => void>();
  constructor() {
    this.proc = fork(fileURLToPath(import.meta.url), ['--client'], { serialization: 'advanced', stdio: 'inherit' });
    this.proc.on('message', (m: FromChild) => {
      if (m.type === 'progress') {
        if (m.opened % 1000 === 0 || m.opened === m.total) process.stdout.write(`    ${m.opened}/${m.total} open\n`);
        return;
      }
      const w = this.waiting.get(m.type);
      this.waiting.delete(m.type);
      w?.(m);
    });
  }
  reply<T extends FromChild['type']>(type: T, timeoutMs: number): Promise<Extract<FromChild, { type: T }>> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`client process: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.set(type, (r) => {
        clearTimeout(t);
        resolve(r as Extract<FromChild, { type: T }>);
      });
    });
  }
  send(m: ToChild): void {
    this.proc.send(m);
  }
  async ask<T extends FromChild['type']>(
    m: ToChild,
    type: T,
    timeoutMs: number,
  ): Promise<Extract<FromChild, { type: T }>> {
    const r = this.reply(type, timeoutMs);
    this.send(m);
    return r;
  }
  /** Arms the clients for `perClient` messages each, runs `trigger` once they are ready, returns what they got. */
  async round(perClient: number, trigger?: () => void | Promise<void>, write?: { file: string; count: number }) {
    const result = this.reply('result', 90_000);
    await this.ask({ type: 'arm', perClient, timeoutMs: 30_000, ...(write ? { write } : {}) }, 'armed', 10_000);
    await trigger?.();
    return result;
  }
  kill(): void {
    this.proc.kill();
  }
}

function sorted(values: Iterable<number>): Float64Array {
  return Float64Array.from(values).sort();
}
function pct(s: Float64Array, p: number): number {
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : 'n/a');

interface Line {
  what: string;
  measured: string;
  goal: string;
  met?: boolean;
}

async function serverMain(): Promise<void> {
  const arg = (name: string, dflt: string) =>
    process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
  const n = Number(arg('clients', '5000'));
  const rounds = Number(arg('rounds', '20'));
  const burst = Number(arg('burst', '200'));
  const cliRuns = Number(arg('cli-runs', '9'));
  const idleS = Number(arg('idle-s', '5'));
  const deadlineMs = Number(arg('deadline-s', '170')) * 1000;
  const lines: Line[] = [];
  const add = (what: string, measured: string, goal: string, met?: boolean) => {
    lines.push({ what, measured, goal, ...(met === undefined ? {} : { met }) });
    console.log(
      `  ${what}: ${measured}${goal ? `   (goal: ${goal}${met === undefined ? '' : met ? ', met' : ', NOT met'})` : ''}`,
    );
  };
  const printTable = () => {
    const rows = [
      ['measure', 'measured', 'goal', ''],
      ...lines.map((l) => [l.what, l.measured, l.goal, l.met === undefined ? '' : l.met ? 'met' : 'NOT met']),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    console.log('');
    for (const [k, r] of rows.entries()) {
      console.log(r.map((c, i) => c.padEnd(widths[i]!)).join(' | '));
      if (k === 0) console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
    }
  };
  const started = Date.now();
  const watchdog = setTimeout(() => {
    console.log(`\nbench-stream: deadline of ${deadlineMs / 1000} s reached; partial results:`);
    printTable();
    process.exit(2);
  }, deadlineMs);
  watchdog.unref();

  console.log(
    `bench-stream: ${n} clients, ${rounds} single-article rounds, a burst of ${burst}, ${cliRuns} CLI runs, ${idleS} s idle`,
  );
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const memory = () => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external + m.arrayBuffers;
  };

  const { SqliteStore } = await import('../src/store/sqlite/index.js');
  const { createKey } = await import('../src/cli/operator.js');
  const { limits, streamAddress } = await import('../src/contract/index.js');
  const { MemoryIpGuard } = await import('../src/state/memory.js');
  const { attachStream } = await import('../src/stream/index.js');
  const { MemoryStreamSlots } = await import('../src/state/stream-slots.js');
  const { WOKEN_FEED_POLL_MS } = await import('../src/server/index.js');

  const dir = mkdtempSync(join(tmpdir(), 'fns-bench-stream-'));
  const file = join(dir, 'fns.sqlite');
  const store = new SqliteStore(file);
  const child = new Child();
  let server: Server | undefined;
  const write = (count: number) => ({ file, count });

  try {
    const LIVE = 'fns_live_';
    const keys: string[] = [];
    store.db.exec('BEGIN');
    for (let i = 0; i < n + 1; i++)
      keys.push((await createKey(store.accounts, { tier: 'pro', livePrefix: LIVE, now: Date.now() })).key);
    store.db.exec('COMMIT');

    server = createServer((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const url = (k: string) => `ws://127.0.0.1:${port}${streamAddress}?api_key=${encodeURIComponent(k)}`;
    const slots = new MemoryStreamSlots();

    // As `fns serve` on SQLite (src/server/index.ts): a commit by another process wakes the feed reader.
    const wakers = new Set<() => void>();
    const watcher = watch(dir, { persistent: false }, (_e, name) => {
      if (typeof name === 'string' && name.startsWith(basename(file))) wakers.forEach((w) => w());
    });
    /** Fan-out slices since the last reset (ms of wall time): how long delivery itself held the event loop. */
    let slices: number[] = [];
    const sliceFigure = () => {
      const s = sorted(slices);
      return { max: s.length ? s[s.length - 1]! : 0, p99: pct(s, 99) };
    };
    const attach = (fanOutSliceMs?: number) =>
      attachStream(server!, {
        accounts: store.accounts,
        articles: store.articles,
        ipGuard: new MemoryIpGuard(limits.ipGuard),
        livePrefix: LIVE,
        clock: Date.now,
        trustProxy: false,
        slots,
        recheckMs: 300_000,
        feedPollMs: WOKEN_FEED_POLL_MS,
        feedWake: (w) => {
          wakers.add(w);
          return () => wakers.delete(w);
        },
        ...(fanOutSliceMs !== undefined ? { fanOutSliceMs } : {}),
        onFanOutSlice: (ms) => {
          slices.push(ms);
        },
      });
    const openClients = async (urls: string[], admitted?: () => number) => {
      const o = await child.ask({ type: 'open', urls }, 'opened', 180_000);
      if (o.opened < urls.length)
        throw new Error(
          `only ${o.opened}/${urls.length} connections opened (${o.failed} failed: ${o.errors.slice(0, 5).join('; ')}); raise the open files limit (ulimit -n)`,
        );
      if (admitted && admitted() !== urls.length) throw new Error(`admitted ${admitted()} of ${urls.length}`);
      await sleep(300);
    };
    const closeClients = async () => {
      await child.ask({ type: 'closeAll' }, 'closed', 60_000);
      const deadline = Date.now() + 30_000;
      while (slots.inUse() > 0 && Date.now() < deadline) await sleep(20);
    };

    // ---------------------------------------------------------------- one client
    let handle = attach();
    await handle.ready;
    console.log('\n[one client]');
    await openClients([url(keys[n]!)], () => handle.connections());
    const one: number[] = [];
    for (let r = 0; r < Math.max(rounds * 2, 20); r++) {
      const got = await child.round(1, undefined, write(1));
      one.push(...got.lat);
      await sleep(20);
    }
    const oneS = sorted(one);
    add('1 client, another process commits: received_at -> receipt p50', ms(pct(oneS, 50)), '');
    add(
      '1 client, another process commits: received_at -> receipt p99',
      ms(pct(oneS, 99)),
      '<= 20 ms',
      pct(oneS, 99) <= 20,
    );

    const inProcess: number[] = [];
    for (let r = 0; r < Math.max(rounds, 10); r++) {
      const got = await child.round(1, async () => {
        await store.articles.insert([article(r)], Date.now);
        handle.wake();
      });
      inProcess.push(...got.lat);
      await sleep(20);
    }
    const ipS = sorted(inProcess);
    add(
      '1 client, this process stores + wake(): received_at -> receipt p99',
      ms(pct(ipS, 99)),
      '<= 20 ms',
      pct(ipS, 99) <= 20,
    );

    // ---------------------------------------------------------------- fns articles ingest
    console.log('\n[fns articles ingest start -> receipt]');
    // The embedded store of this run, whatever this shell has set.
    const cliEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir };
    delete cliEnv.DATABASE_URL;
    const fns = (args: string[], input: string) =>
      new Promise<number>((resolve, reject) => {
        const p = spawn(process.execPath, [join(repoRoot, 'bin', 'fns.mjs'), ...args], {
          env: cliEnv,
          stdio: ['pipe', 'ignore', 'inherit'],
        });
        p.on('error', reject);
        p.on('close', (code) => resolve(code ?? 1));
        p.stdin.end(input);
      });
    await fns(['--help'], ''); // builds the CLI bundle if a source changed (as the first run after a change does)
    const cli: number[] = [];
    for (let r = 0; r < cliRuns; r++) {
      let t0 = 0;
      const got = await child.round(1, () => {
        t0 = now();
        void fns(['articles', 'ingest', '-'], `${JSON.stringify(article(r))}\n`);
      });
      cli.push(got.receipts[0]! - t0);
      await sleep(100);
    }
    const cliS = sorted(cli);
    // The floor on this machine now: Node itself starting and exiting (`node -e 0`), spawn to exit.
    const floor: number[] = [];
    for (let r = 0; r < cliRuns; r++) {
      const t0 = now();
      await new Promise<void>((resolve, reject) =>
        spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' })
          .on('error', reject)
          .on('close', () => resolve()),
      );
      floor.push(now() - t0);
    }
    add(
      `fns articles ingest start -> receipt p50 (${cliRuns} runs)`,
      ms(pct(cliS, 50)),
      '<= 150 ms',
      pct(cliS, 50) <= 150,
    );
    add('fns articles ingest start -> receipt max', ms(cliS[cliS.length - 1]!), '');
    add('node -e 0, spawn to exit p50 (the floor of any command here, now)', ms(pct(sorted(floor), 50)), '');
    await closeClients();
    await handle.close();

    // ---------------------------------------------------------------- N clients, sliced and as one loop
    const eld = monitorEventLoopDelay({ resolution: 1 });
    const many = async (label: string, sliceMs: number | undefined) => {
      handle = attach(sliceMs);
      await handle.ready;
      console.log(`\n[${n} clients, ${label}]`);
      const before = memory();
      await openClients(keys.slice(0, n).map(url), () => handle.connections());
      const perConn = (memory() - before) / n / 1024;
      const last: number[] = [];
      const all: number[] = [];
      let missing = 0;
      eld.reset();
      eld.enable();
      slices = [];
      for (let r = 0; r < rounds; r++) {
        const got = await child.round(1, undefined, write(1));
        missing += got.expected - got.received;
        const s = sorted(got.lat);
        last.push(s[s.length - 1]!);
        all.push(...got.lat);
        await sleep(50);
      }
      eld.disable();
      const stall = eld.max / 1e6;
      const slice = sliceFigure();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await sleep(idleS * 1000);
      const c = process.cpuUsage(cpu0);
      const idle = (c.user + c.system) / 1000 / ((performance.now() - t0) / 1000);
      eld.reset();
      eld.enable();
      slices = [];
      const b = await child.round(burst, undefined, write(burst));
      eld.disable();
      const burstSlice = sliceFigure();
      const bS = sorted(b.lat);
      await closeClients();
      await handle.close();
      return {
        last: sorted(last),
        all: sorted(all),
        missing,
        stall,
        slice,
        idle,
        perConn,
        burst: {
          p50: pct(bS, 50),
          p99: pct(bS, 99),
          stall: eld.max / 1e6,
          slice: burstSlice,
          missing: b.expected - b.received,
        },
      };
    };
    const sliced = await many('fan-out in time slices (now)', undefined);
    const loop = await many('fan-out as one synchronous loop (before)', Infinity);

    console.log(`\n[${n} clients, plain ws server: send() in a loop (the floor the client process sets)]`);
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    const rawPort = (wss.address() as AddressInfo).port;
    await openClients(Array.from({ length: n }, () => `ws://127.0.0.1:${rawPort}/`));
    const rawLast: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const got = await child.round(1, () => {
        const payload = JSON.stringify({
          id: `01J${String(r).padStart(23, '0')}`,
          ...article(r),
          received_at: new Date().toISOString(),
        });
        for (const c of wss.clients) c.send(payload);
      });
      const s = sorted(got.lat);
      rawLast.push(s[s.length - 1]!);
      await sleep(50);
    }
    await child.ask({ type: 'closeAll' }, 'closed', 60_000);
    await new Promise<void>((r) => wss.close(() => r()));
    const rawS = sorted(rawLast);
    watcher.close();

    console.log('');
    const lastLine = (label: string, s: Float64Array, goal: boolean) => {
      add(`${n} clients, ${label}: last client, received_at -> receipt p50 of ${rounds} rounds`, ms(pct(s, 50)), '');
      add(
        `${n} clients, ${label}: last client, received_at -> receipt p99 of ${rounds} rounds`,
        ms(pct(s, 99)),
        goal ? '<= 50 ms' : '',
        goal ? pct(s, 99) <= 50 : undefined,
      );
    };
    lastLine('sliced fan-out', sliced.last, true);
    add(
      `${n} clients, sliced fan-out: longest fan-out slice (event loop held by delivery) / p99 of slices`,
      `${ms(sliced.slice.max)} / ${ms(sliced.slice.p99)}`,
      'longest <= 10 ms',
      sliced.slice.max <= 10,
    );
    add(`${n} clients, sliced fan-out: longest event loop stall of any cause while delivering`, ms(sliced.stall), '');
    add(
      `${n} clients, sliced fan-out: every client, received_at -> receipt p50 / p99`,
      `${ms(pct(sliced.all, 50))} / ${ms(pct(sliced.all, 99))}`,
      '',
    );
    lastLine('one synchronous loop (before)', loop.last, false);
    add(
      `${n} clients, one synchronous loop (before): longest fan-out loop / any stall`,
      `${ms(loop.slice.max)} / ${ms(loop.stall)}`,
      '',
    );
    lastLine('plain ws send() loop', rawS, false);
    add(
      `${n} clients connected, idle: CPU of this process, sliced / one loop`,
      `${sliced.idle.toFixed(1)} / ${loop.idle.toFixed(1)} ms per s`,
      'sliced <= one loop (+1 ms/s noise)',
      sliced.idle <= loop.idle + 1,
    );
    add(
      `${n} clients, burst of ${burst}: receipt p50 / p99, sliced`,
      `${ms(sliced.burst.p50)} / ${ms(sliced.burst.p99)}`,
      '',
    );
    add(
      `${n} clients, burst of ${burst}: receipt p50 / p99, one loop (before)`,
      `${ms(loop.burst.p50)} / ${ms(loop.burst.p99)}`,
      '',
    );
    add(
      `${n} clients, burst of ${burst}: longest fan-out slice, sliced (p99 of its slices) / one loop`,
      `${ms(sliced.burst.slice.max)} (${ms(sliced.burst.slice.p99)}) / ${ms(loop.burst.slice.max)}`,
      'sliced <= 10 ms',
      sliced.burst.slice.max <= 10,
    );
    add(
      `${n} clients, burst of ${burst}: longest stall of any cause, sliced / one loop`,
      `${ms(sliced.burst.stall)} / ${ms(loop.burst.stall)}`,
      '',
    );
    add('memory per connection (heap + external + array buffers)', `${sliced.perConn.toFixed(1)} KB`, '');
    const missing = sliced.missing + loop.missing + sliced.burst.missing + loop.burst.missing;
    add('messages not received', String(missing), '0', missing === 0);
  } catch (e) {
    console.log(`\nbench-stream: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  } finally {
    child.kill();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nResults (${((Date.now() - started) / 1000).toFixed(0)} s; event loop stall = longest delay of a 1 ms timer in the serving process; slices and stalls are wall time, so a loaded machine that deschedules this process lengthens them):`,
  );
  printTable();
}

if (process.argv.includes('--client')) void clientMain();
else await serverMain();

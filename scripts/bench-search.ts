/**
 * `npm run bench:search`: the search performance table, each goal printed next to the value
 * measured in this run and the figure measured before the search optimisation.
 *
 * 1. The index, on seeded unit vectors (BENCH_CORPUS: clustered, or random; 384 dimensions), at each size of
 *    BENCH_SIZES (default 100000,1000000): loaded through SemanticIndex's real paged path from an
 *    in-memory vector store (time to ready, longest event-loop block while loading, memory per vector),
 *    then the exact scan (a contiguous matrix, sliced) and the approximate index (HNSW) against each
 *    other on BENCH_QUERIES queries: recall@10 of HNSW against exact, latency p50/p95, and the longest
 *    slice the exact scan held the loop; then a restart on the saved approximate index (time to ready,
 *    recall, the event-loop block of the synchronous load).
 * 2. The service path at BENCH_SERVICE_ARCHIVE (default 100000) archived articles with a vector each
 *    (SQLite file, the REST app, the real local embedding model): the list is answered while the index
 *    loads; search latency end to end (HTTP, embedding included); list p99 at a fixed BENCH_RATE req/s
 *    (default 200) with no search and with 4 searchers looping, as a ratio.
 *
 * BENCH_SKIP_SERVICE=1 runs part 1 only; BENCH_SKIP_INDEX=1 part 2 only. Run it on a quiet machine.
 */
import { lineLog } from '../src/domain/log.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { limits } from '../src/contract/index.js';
import { createApp } from '../src/http/app.js';
import { benchAppDeps } from './lib/bench-app.js';
import { DEFAULT_ANN_THRESHOLD, SemanticIndex } from '../src/indexing/index.js';
import { createKey } from '../src/cli/operator.js';
import { createLocalEmbedder, type Embedder } from '../src/search/index.js';
import { rankMatrix } from '../src/search/rank.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { seedArchive } from './lib/archive.js';
import {
  asIndexStore,
  clusteredUnitVectors,
  idOf,
  MatrixVectorStore,
  randomUnitVectors,
} from '../test/search/corpus.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const autocannon = join(root, 'node_modules', '.bin', 'autocannon');
const run = promisify(execFile);
const DIM = 384;
const SIZES = (process.env.BENCH_SIZES ?? '100000,1000000').split(',').map(Number);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 100);
const SERVICE_ARCHIVE = Number(process.env.BENCH_SERVICE_ARCHIVE ?? 100_000);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SEARCHERS = 4;
/**
 * clustered (default): unit vectors around topics, as text embeddings are; random: uniform on the
 * sphere, where nearest neighbours barely stand out and any graph index loses recall.
 */
const CORPUS = process.env.BENCH_CORPUS === 'random' ? 'random' : 'clustered';
const corpus = (n: number, seed: number, size = n) =>
  CORPUS === 'random'
    ? randomUnitVectors(n, DIM, seed)
    : clusteredUnitVectors(n, DIM, seed, Math.max(200, Math.round(size / 500)), 0.6, 42);

/** The search goals, and the figures measured before the optimisation (100k archive, 2 cores). */
const GOALS = { p95At100kMs: 30, p95At1MMs: 60, listRatio: 1.5, bytesPerVector: 2048, recall: 0.95, blockMs: 5 };
const BEFORE = {
  p95At100k: '72.4 ms (p50 32.7)',
  listRatio: '35 / 11 ms = 3.2x',
  bytes: '-',
  block: '-',
  ready: '38 s at 100k, ~7 min at 1M (rebuilt every start)',
};

const rows: string[][] = [];
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const gc = () => (globalThis as { gc?: () => void }).gc?.();
const memory = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.rss;
};

/** A pause for rankMatrix/addRows that records the longest stretch between two yields. */
function slicer(): { pause: () => Promise<void>; longest: () => number; reset: () => void } {
  let last = performance.now();
  let longest = 0;
  return {
    pause: () =>
      new Promise<void>((r) => {
        longest = Math.max(longest, performance.now() - last);
        setImmediate(() => {
          last = performance.now();
          r();
        });
      }),
    longest: () => longest,
    reset: () => {
      last = performance.now();
      longest = 0;
    },
  };
}

async function indexPart(n: number): Promise<void> {
  console.log(`\n## index: ${n.toLocaleString()} ${CORPUS} unit vectors, ${DIM} dimensions`);
  const data = corpus(n, 42);
  // Fresh points of the same distribution (not stored ones).
  const queries = corpus(QUERIES, 4242, n);
  const store = new MatrixVectorStore('bench', data, DIM);
  const embedder: Embedder = { modelId: 'bench', embed: async () => [] };
  const before = memory();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t0 = performance.now();
  const persistDir = mkdtempSync(join(tmpdir(), 'fns-bench-index-'));
  const indexOptions = {
    log: lineLog((m) => console.log(`  ${m}`)),
    buildThreads: Number(process.env.BENCH_BUILD_THREADS ?? 1),
    persistDir,
  };
  let index = new SemanticIndex(asIndexStore(store), embedder, indexOptions);
  await index.start();
  const loadMs = performance.now() - t0;
  await index.settled();
  const annMs = performance.now() - t0;
  loop.disable();
  const bytes = (memory() - before) / n;
  const st = index.status();
  console.log(
    `  ready (exact) in ${(loadMs / 1000).toFixed(1)} s, ${st.mode} after ${(annMs / 1000).toFixed(1)} s; longest event-loop block while loading and building ${ms(loop.max / 1e6)}; ${bytes.toFixed(0)} bytes per vector (RSS)`,
  );

  // Exact, on the same data, from one contiguous matrix (the index's own exact path).
  const s = slicer();
  const exactLat: number[] = [];
  const truth: number[][] = [];
  const idOfRow = (r: number) => idOf(r);
  for (let q = 0; q < QUERIES; q++) {
    const query = queries.subarray(q * DIM, (q + 1) * DIM);
    const t = performance.now();
    const top = await rankMatrix(data, DIM, n, query, 10, idOfRow, { pause: s.pause });
    exactLat.push(performance.now() - t);
    truth.push(top.map((x) => x.row));
  }
  console.log(
    `  exact (sliced): p50 ${ms(pct(exactLat, 50))}, p95 ${ms(pct(exactLat, 95))}; longest slice ${ms(s.longest())}`,
  );

  // The index as the service ranks (HNSW past the threshold): recall against exact, latency.
  const rank = (index as unknown as { rank(q: Float32Array, k: number): Promise<{ row: number }[]> }).rank.bind(index);
  const annLat: number[] = [];
  let hits = 0;
  for (let q = 0; q < QUERIES; q++) {
    const query = queries.subarray(q * DIM, (q + 1) * DIM);
    const t = performance.now();
    const top = await rank(query, 10);
    annLat.push(performance.now() - t);
    const want = new Set(truth[q]);
    hits += top.filter((x) => want.has(x.row)).length;
  }
  const recall = hits / (QUERIES * 10);
  console.log(
    `  index (${st.mode}): p50 ${ms(pct(annLat, 50))}, p95 ${ms(pct(annLat, 95))}, recall@10 vs exact ${recall.toFixed(3)}`,
  );
  const label = n >= 1_000_000 ? '1M' : `${n / 1000}k`;
  if (st.mode === 'approximate')
    rows.push([
      `recall@10 vs exact at ${label}`,
      `>= ${GOALS.recall}`,
      '-',
      recall.toFixed(3),
      verdict(recall >= GOALS.recall),
    ]);
  rows.push([
    `memory per stored vector at ${label}`,
    `<= ${GOALS.bytesPerVector} B`,
    BEFORE.bytes,
    `${bytes.toFixed(0)} B`,
    verdict(bytes <= GOALS.bytesPerVector),
  ]);
  rows.push([`index ranking p95 at ${label} (${st.mode})`, '-', '-', ms(pct(annLat, 95)), '-']);
  rows.push([
    `longest event-loop block: exact scan / load at ${label}`,
    `<= ${GOALS.blockMs} ms`,
    BEFORE.block,
    `${ms(s.longest())} / ${ms(loop.max / 1e6)}`,
    verdict(s.longest() <= GOALS.blockMs),
  ]);
  rows.push([
    `time to ready (exact) / to approximate at ${label} (background)`,
    '-',
    '-',
    `${(loadMs / 1000).toFixed(1)} s / ${(annMs / 1000).toFixed(1)} s`,
    '-',
  ]);
  indexRanking.set(n, pct(annLat, 95));

  // A restart: the saved approximate index is loaded, not rebuilt (the first run saved it after building).
  await index.close();
  // eslint-disable-next-line no-useless-assignment -- drops the last reference, so gc() below frees the index
  index = undefined as unknown as SemanticIndex;
  gc();
  const restartLoop = monitorEventLoopDelay({ resolution: 1 });
  restartLoop.enable();
  const r0 = performance.now();
  const restarted = new SemanticIndex(asIndexStore(store), embedder, indexOptions);
  await restarted.start();
  const restartMs = performance.now() - r0;
  restartLoop.disable();
  const rst = restarted.status();
  const rrank = (restarted as unknown as { rank(q: Float32Array, k: number): Promise<{ row: number }[]> }).rank.bind(
    restarted,
  );
  let rhits = 0;
  for (let q = 0; q < QUERIES; q++) {
    const top = await rrank(queries.subarray(q * DIM, (q + 1) * DIM), 10);
    const want = new Set(truth[q]);
    rhits += top.filter((x) => want.has(x.row)).length;
  }
  console.log(
    `  restart with the saved index: ready in ${(restartMs / 1000).toFixed(2)} s, ${rst.mode}, recall@10 ${(rhits / (QUERIES * 10)).toFixed(3)}; longest event-loop block ${ms(restartLoop.max / 1e6)} (the synchronous usearch load)`,
  );
  rows.push([
    `index ready after a start at ${label} (saved index loaded)`,
    'at once (seconds)',
    BEFORE.ready,
    `${(restartMs / 1000).toFixed(2)} s, ${rst.mode}; loop blocked ${ms(restartLoop.max / 1e6)} once`,
    verdict(rst.mode === 'approximate' && restartMs < 15_000),
  ]);
  await restarted.close();
  rmSync(persistDir, { recursive: true, force: true });
}
const indexRanking = new Map<number, number>();

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function servicePart(): Promise<void> {
  console.log(
    `\n## service: ${SERVICE_ARCHIVE.toLocaleString()} articles with a vector each (SQLite), the local embedding model`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'fns-bench-search-'));
  const store = new SqliteStore(join(dir, 'fns.sqlite'));
  const embedder = createLocalEmbedder();
  try {
    const now = Date.now();
    await seedArchive(store.articles, SERVICE_ARCHIVE, { now, batch: 10_000 });
    const vectors = randomUnitVectors(SERVICE_ARCHIVE, DIM, 7);
    // Every article gets a vector for the local model, straight into the store (as the worker would).
    const allIds: string[] = [];
    for (let seq = 0; ;) {
      const feed = await store.articles.feedAfter(seq, 10_000);
      if (feed.length === 0) break;
      for (const f of feed) allIds.push(f.article.id);
      seq = feed[feed.length - 1]!.seq;
    }
    for (let i = 0; i < allIds.length; i += 5000) {
      await store.vectors.storeVectors(
        embedder.modelId,
        allIds.slice(i, i + 5000).map((id, j) => ({ id, vector: vectors.subarray((i + j) * DIM, (i + j + 1) * DIM) })),
      );
    }
    const key = (await createKey(store.accounts, { tier: 'max', livePrefix: limits.keyPrefixes.live, now })).key;
    await embedder.embed(['warm the model up']);

    const index = new SemanticIndex(store, embedder);
    const app = createApp(benchAppDeps(store, index));
    const { server, url } = await listen(app);
    const headers = { 'X-API-Key': key };
    try {
      const t0 = performance.now();
      const ready = index.start();
      const list = await fetch(`${url}/v1/news?limit=50`, { headers });
      const listMs = performance.now() - t0;
      const early = await fetch(`${url}/v1/news/search?q=rates`, { headers });
      await ready;
      const readyMs = performance.now() - t0;
      await index.settled();
      console.log(
        `  list answered ${list.status} after ${ms(listMs)} while loading; search meanwhile ${early.status} (Retry-After ${early.headers.get('retry-after')}); index ready after ${(readyMs / 1000).toFixed(1)} s (${index.status().mode})`,
      );
      rows.push([
        'list answered while the index loads',
        'at once',
        'first search blocked 957 ms',
        `${list.status} in ${ms(listMs)}; search ${early.status} until ready (${(readyMs / 1000).toFixed(1)} s)`,
        verdict(list.status === 200 && early.status === 503),
      ]);

      const words = [
        'central bank tightening',
        'oil prices fall',
        'earnings beat estimates',
        'chip export rules',
        'bond yields climb',
      ];
      const lat: number[] = [];
      for (let i = 0; i < 60; i++) {
        const t = performance.now();
        const r = await fetch(
          `${url}/v1/news/search?q=${encodeURIComponent(`${words[i % words.length]} ${i}`)}&limit=10`,
          { headers },
        );
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`search answered ${r.status}`);
        lat.push(performance.now() - t);
      }
      const embedLat: number[] = [];
      for (let i = 0; i < 30; i++) {
        const t = performance.now();
        await embedder.embed([`${words[i % words.length]} ${i}`]);
        embedLat.push(performance.now() - t);
      }
      console.log(
        `  search end to end: p50 ${ms(pct(lat, 50))}, p95 ${ms(pct(lat, 95))} (query embedding alone, same run: p50 ${ms(pct(embedLat, 50))}, p95 ${ms(pct(embedLat, 95))})`,
      );
      rows.push([
        `search p95 end to end at ${SERVICE_ARCHIVE / 1000}k (HTTP, embedding incl.)`,
        `<= ${GOALS.p95At100kMs} ms`,
        BEFORE.p95At100k,
        `${ms(pct(lat, 95))} (embedding alone p95 ${ms(pct(embedLat, 95))}, p50 ${ms(pct(embedLat, 50))})`,
        verdict(pct(lat, 95) <= GOALS.p95At100kMs),
      ]);
      const at1M = indexRanking.get(1_000_000);
      if (at1M !== undefined) {
        const est = pct(lat, 95) - (indexRanking.get(SERVICE_ARCHIVE) ?? 0) + at1M;
        rows.push([
          'search p95 at 1M (service p95 at 100k, ranking swapped for 1M)',
          `<= ${GOALS.p95At1MMs} ms`,
          '-',
          ms(est),
          verdict(est <= GOALS.p95At1MMs),
        ]);
      }

      const listAtRate = async () => {
        const { stdout } = await run(
          autocannon,
          [
            '-j',
            '-c',
            '10',
            '-R',
            String(RATE),
            '-d',
            String(SECONDS),
            '-H',
            `X-API-Key=${key}`,
            `${url}/v1/news?limit=50`,
          ],
          { maxBuffer: 1 << 26 },
        );
        const r = JSON.parse(stdout);
        return { p99: r.latency.p99 as number, rps: r.requests.average as number, non2xx: r.non2xx as number };
      };
      await listAtRate(); // warm-up
      const quiet = await listAtRate();
      let stop = false;
      let searches = 0;
      const searcher = async (n: number) => {
        for (let i = 0; !stop; i++) {
          const r = await fetch(
            `${url}/v1/news/search?q=${encodeURIComponent(`${words[(i + n) % words.length]} ${n} ${i}`)}`,
            { headers },
          );
          await r.arrayBuffer();
          searches++;
        }
      };
      const loops = Array.from({ length: SEARCHERS }, (_, n) => searcher(n));
      const busy = await listAtRate();
      stop = true;
      await Promise.all(loops);
      const ratio = busy.p99 / Math.max(quiet.p99, 1);
      console.log(
        `  list at ${RATE} req/s: p99 ${quiet.p99} ms alone, ${busy.p99} ms with ${SEARCHERS} searchers (${(searches / SECONDS).toFixed(0)} searches/s)`,
      );
      rows.push([
        `list p99 with ${SEARCHERS} searchers / without`,
        `<= ${GOALS.listRatio}x`,
        BEFORE.listRatio,
        `${busy.p99} / ${quiet.p99} ms = ${ratio.toFixed(2)}x`,
        verdict(ratio <= GOALS.listRatio),
      ]);
    } finally {
      index.close();
      server.close();
    }
  } finally {
    await embedder.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `bench:search: ANN threshold ${DEFAULT_ANN_THRESHOLD.toLocaleString()} vectors; ${QUERIES} queries per size${(globalThis as { gc?: unknown }).gc ? '' : ' (run with --expose-gc for steadier memory figures)'}`,
  );
  if (process.env.BENCH_SKIP_INDEX !== '1') for (const n of SIZES) await indexPart(n);
  if (process.env.BENCH_SKIP_SERVICE !== '1') await servicePart();
  console.log('\n| goal | target | before | measured | |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

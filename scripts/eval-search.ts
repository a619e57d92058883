/**
 * Search quality and cost of the local embedder on the labelled set test/fixtures/search-eval.json.
 *
 *   npx tsx scripts/eval-search.ts
 *
 * For each query: recall@5 of the embedding ranking (all-MiniLM-L6-v2, exact cosine) and of a BM25
 * keyword baseline; then their means, embedding throughput, the latency of one query (embed + rank),
 * and the cost of exact ranking over 100,000 random 384-d vectors. Progress goes to stderr, results
 * to stdout. Exits non-zero only on error. Offline: nothing is downloaded.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Bm25, mean, parseEvalSet, recallAtK } from './lib/evaluate-search.js';
import { LOCAL_DIMENSIONS, createLocalEmbedder } from '../src/search/local.js';
import { prng } from './lib/random.js';
import { bufferToVector, cosineTopK, vectorToBuffer } from '../src/search/rank.js';

const K = 5;
const SCALE_N = 100_000;
const progress = (msg: string) => process.stderr.write(`… ${msg}\n`);
const ms = (t0: number) => performance.now() - t0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const set = parseEvalSet(JSON.parse(readFileSync(new URL('../test/fixtures/search-eval.json', import.meta.url), 'utf8')));
  const texts = set.headlines.map((h) => h.text);
  const n = texts.length;
  progress(`${n} headlines, ${set.queries.length} queries`);

  const embedder = createLocalEmbedder();
  try {
    progress('cold start: loading the model in the worker threads and embedding the corpus');
    let t0 = performance.now();
    const vectors = await embedder.embed(texts);
    const coldMs = ms(t0);
    const rssMb = process.memoryUsage().rss / 1e6;

    progress('batched throughput (3 runs)');
    const batched: number[] = [];
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    for (let r = 0; r < 3; r++) {
      t0 = performance.now();
      await embedder.embed(texts);
      batched.push(n / (ms(t0) / 1000));
    }
    loopDelay.disable();
    progress('one-at-a-time throughput');
    t0 = performance.now();
    for (const text of texts) await embedder.embed([text]);
    const single = n / (ms(t0) / 1000);

    progress('queries');
    const corpus = set.headlines.map((h, i) => ({ id: h.id, vector: vectors[i] as Float32Array }));
    const bm25 = new Bm25(set.headlines);
    const rows: { id: string; text: string; relevant: string[]; emb: number; kw: number; embTop: string[]; kwTop: string[] }[] = [];
    const queryMs: number[] = [];
    for (const q of set.queries) {
      t0 = performance.now();
      const [qv] = await embedder.embed([q.text]);
      const hits = cosineTopK(qv as Float32Array, corpus, K);
      queryMs.push(ms(t0));
      const embTop = hits.map((h) => h.id);
      const kwTop = bm25.topK(q.text, K).map((h) => h.id);
      rows.push({ id: q.id, text: q.text, relevant: q.relevant, emb: recallAtK(embTop, q.relevant, K), kw: recallAtK(kwTop, q.relevant, K), embTop, kwTop });
    }

    progress('long text (truncated by the model at 256 tokens)');
    const long = Array.from({ length: 40 }, () => 'Shares of the lender rose after it reported higher net interest income and lower loan-loss provisions.').join(' ');
    const longMs: number[] = [];
    for (let r = 0; r < 3; r++) {
      t0 = performance.now();
      await embedder.embed([long]);
      longMs.push(ms(t0));
    }

    progress(`exact ranking over ${SCALE_N.toLocaleString('en')} random ${LOCAL_DIMENSIONS}-d vectors`);
    const rand = prng(42);
    const big = Array.from({ length: SCALE_N }, (_, i) => ({ id: String(i).padStart(8, '0'), vector: randomUnit(rand) }));
    const query = randomUnit(rand);
    const scaleMs: number[] = [];
    for (let r = 0; r < 5; r++) {
      t0 = performance.now();
      cosineTopK(query, big, 20);
      scaleMs.push(ms(t0));
    }
    const blobs = big.map((c) => vectorToBuffer(c.vector));
    t0 = performance.now();
    for (const b of blobs) bufferToVector(b);
    const decodeMs = ms(t0);

    // Report.
    const pct = (x: number) => `${Math.round(x * 100)}%`.padStart(4);
    const w = Math.max(...rows.map((r) => r.text.length));
    console.log(`\nrecall@${K} per query (emb = all-MiniLM-L6-v2 cosine, bm25 = keyword baseline)\n`);
    console.log(`${'query'.padEnd(4)}  ${'text'.padEnd(w)}  relevant  emb  bm25  emb top-${K} / bm25 top-${K}`);
    for (const r of rows) {
      console.log(`${r.id}  ${r.text.padEnd(w)}  ${r.relevant.join(',').padEnd(8)}  ${pct(r.emb)}  ${pct(r.kw)}  ${r.embTop.join(' ')} / ${r.kwTop.join(' ') || '(no word in common)'}`);
    }
    const embMean = mean(rows.map((r) => r.emb));
    const kwMean = mean(rows.map((r) => r.kw));
    console.log(`\nmean recall@${K}: embedding ${embMean.toFixed(3)}, BM25 ${kwMean.toFixed(3)}  (${rows.length} queries, ${n} headlines)`);
    console.log(`  queries won by embedding ${rows.filter((r) => r.emb > r.kw).length}, by BM25 ${rows.filter((r) => r.kw > r.emb).length}, tied ${rows.filter((r) => r.kw === r.emb).length}`);
    console.log('\ntiming');
    console.log(`  cold start (model load in worker threads + ${n} headlines): ${coldMs.toFixed(0)} ms, process RSS after ${rssMb.toFixed(0)} MB`);
    console.log(`  embedding, batched (${n} per call):  ${batched.map((x) => x.toFixed(0)).join(' / ')} headlines/s (median ${median(batched).toFixed(0)})`);
    console.log(`  main event loop while embedding:     max delay ${(loopDelay.max / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms (the model runs in worker threads)`);
    console.log(`  embedding, one at a time:            ${single.toFixed(0)} headlines/s`);
    console.log(`  query (embed + exact rank over ${n}): mean ${mean(queryMs).toFixed(1)} ms, median ${median(queryMs).toFixed(1)} ms, max ${Math.max(...queryMs).toFixed(1)} ms`);
    console.log(`  one 256-token text:                  ${longMs.map((x) => x.toFixed(0)).join(' / ')} ms`);
    console.log(`  exact top-20 over ${SCALE_N.toLocaleString('en')} x ${LOCAL_DIMENSIONS}-d: ${scaleMs.map((x) => x.toFixed(0)).join(' / ')} ms (median ${median(scaleMs).toFixed(0)} ms)`);
    console.log(`  decoding ${SCALE_N.toLocaleString('en')} stored BLOBs (bufferToVector): ${decodeMs.toFixed(0)} ms`);
  } finally {
    await embedder.close();
  }
}


function randomUnit(rand: () => number): Float32Array {
  const v = new Float32Array(LOCAL_DIMENSIONS);
  let s = 0;
  for (let i = 0; i < v.length; i++) {
    const x = rand() * 2 - 1;
    v[i] = x;
    s += x * x;
  }
  const norm = Math.sqrt(s);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

/**
 * The cost of enrichment with the learned sentiment model, against the lexicon rules alone in the same run.
 *
 *   npm run bench:enrich -- [--articles=200] [--backfill=5000]
 *
 * 0. Ticker matching alone (findMentions over the directory): µs per text, with the directory's size, and
 *    over a directory ten times larger (made-up names with new first words, and sharing the real ones').
 * 1. The enrich stage alone, one core: µs per text for `enrich()` (tickers from the whole directory, the model,
 *    urgency) and for the same with the lexicon's `analyse` in place of the model; the ratio. Beside it the worst
 *    case: ms for one line of 4,000 distinct cashtags (`$AAA $BAA …`, 19,999 characters, no clause break).
 * 2. Resident memory added by loading the model: a fresh Node process importing src/enrich/learned.ts vs
 *    src/enrich/sentiment.ts alone (RSS after a GC).
 * 3. The real service (SQLite in a temp DATA_DIR, a stub embedder): one article pushed at a time on the admin
 *    listener, `--articles` of them spaced 25 ms apart; push sent -> received by a stream client; p50/p99.
 *    Goal p99 <= 50 ms on 2 cores.
 * 4. Backfill: `--backfill` distinct articles pushed in bodies of 1,000; the clock runs until the stream
 *    client has them all; items/s. Goal >= 300/s (a 5,000-item backfill in under 20 s).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createKey } from '../src/cli/operator.js';
import { loadConfig } from '../src/config/index.js';
import { COMPANIES } from '../src/enrich/directory.js';
import { enrich } from '../src/enrich/index.js';
import { analyse } from '../src/enrich/sentiment.js';
import { articleMentions, findMentions, findMentionsIn, nameIndex } from '../src/enrich/tickers.js';
import { prng } from './lib/random.js';
import { urgencyFor } from '../src/enrich/urgency.js';
import { createLogger } from '../src/ops/logger.js';
import type { Embedder } from '../src/search/index.js';
import { livePrefix, startService } from '../src/server/index.js';
import { readCorpus } from './lib/sentiment-corpus.js';

const arg = (name: string, dflt: number): number => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : dflt;
};
const ARTICLES = arg('articles', 200);
const BACKFILL = arg('backfill', 5000);
const ADMIN_TOKEN = 'bench-token-0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

const stubEmbedder: Embedder = {
  id: 'bench-stub',
  dim: 4,
  embed: async (texts: string[]) => texts.map(() => Float32Array.from([1, 0, 0, 0])),
} as unknown as Embedder;

function perText(texts: string[], f: (t: string) => unknown): number {
  for (const t of texts) f(t); // warm
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < 1500) {
    for (const t of texts) {
      f(t);
      n++;
    }
  }
  return ((performance.now() - t0) * 1000) / n;
}

/** One line of 4,000 distinct three-letter cashtags (`$AAA $BAA …`), 19,999 characters. */
function cashtagList(): string {
  const letter = (k: number) => String.fromCharCode(65 + (Math.floor(k) % 26));
  return Array.from({ length: 4000 }, (_, i) => `$${letter(i)}${letter(i / 26)}${letter(i / 676)}`).join(' ');
}

/** The median of `runs` timed calls, in ms. */
function msPerCall(f: () => unknown, runs = 9): number {
  f();
  const ms = Array.from({ length: runs }, () => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  });
  return quantile(ms, 0.5);
}

function lexiconEnrich(text: string): unknown {
  const mentions = articleMentions(text);
  return [analyse(text, mentions), urgencyFor(text, undefined)];
}

function rssOf(module: string): number {
  const code = `await import(${JSON.stringify(module)}); globalThis.gc?.(); await new Promise((r) => setTimeout(r, 50)); process.stdout.write(String(process.memoryUsage().rss));`;
  return Number(
    execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: process.cwd(),
    }).toString(),
  );
}

async function main(): Promise<void> {
  console.log(
    `bench:enrich on ${cpus().length} CPU(s), Node ${process.version}, a directory of ${COMPANIES.size} companies`,
  );
  const texts = readCorpus().map((c) => c.text);

  const model = perText(texts, (t) => enrich(t));
  const lexicon = perText(texts, lexiconEnrich);
  const matching = perText(texts, (t) => findMentions(t));
  console.log(
    `0. ticker matching alone (findMentions), one core: ${matching.toFixed(1)} µs/text with ${COMPANIES.size} companies`,
  );
  // The same matcher over a directory ten times larger: nine made-up companies per real one, their names
  // starting with a new word (`Vorlak Apple`), or with the real name's first word (`Apple Vorlak`, so the
  // lists looked up by a headline's words grow tenfold too: the worst case of the first-word index).
  for (const [how, name] of [
    ['new first words', (word: string, n: string) => `${word} ${n}`],
    ['shared first words', (word: string, n: string) => `${n} ${word}`],
  ] as const) {
    const grown = new Map(COMPANIES);
    const rand = prng(7);
    for (let k = 0; k < 9; k++) {
      for (const [sym, names] of COMPANIES) {
        const word = `V${Array.from({ length: 6 }, () => 'aeioulnrstkvz'[Math.floor(rand() * 13)]).join('')}`;
        grown.set(
          `Z${k}${sym}`.slice(0, 16),
          names
            .split('|')
            .map((n) => (n.startsWith('?') ? `?${name(word, n.slice(1))}` : name(word, n)))
            .join('|'),
        );
      }
    }
    const index = nameIndex(grown);
    const cost = perText(texts, (t) => findMentionsIn(index, t));
    console.log(
      `   the same over ${grown.size} companies (x${(grown.size / COMPANIES.size).toFixed(0)}, ${how}): ${cost.toFixed(1)} µs/text (${(cost / matching).toFixed(2)}x)`,
    );
  }
  console.log(
    `1. enrich stage, one core, ${texts.length} corpus texts: model ${model.toFixed(1)} µs/text (${Math.round(1e6 / model)}/s), lexicon alone ${lexicon.toFixed(1)} µs/text; ratio ${(model / lexicon).toFixed(2)}x`,
  );
  const list = cashtagList();
  console.log(
    `   worst case, one ${list.length.toLocaleString('en-US')}-character line of 4,000 distinct cashtags: ${msPerCall(() => enrich(list)).toFixed(1)} ms (a corpus text ${(model / 1000).toFixed(3)} ms)`,
  );

  const withModel = rssOf('./src/enrich/learned.ts');
  const withLexicon = rssOf('./src/enrich/sentiment.ts');
  console.log(
    `2. resident memory: importing the model ${(withModel / 2 ** 20).toFixed(1)} MiB, the lexicon alone ${(withLexicon / 2 ** 20).toFixed(1)} MiB: +${((withModel - withLexicon) / 2 ** 20).toFixed(1)} MiB (goal <= +60 MB)`,
  );

  const dataDir = mkdtempSync(join(tmpdir(), 'fns-bench-enrich-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', ADMIN_TOKEN });
  const svc = await startService(config, {
    embedder: stubEmbedder,
    logger: createLogger({ destination: { write: () => {} } }),
  });
  try {
    const key = (await createKey(svc.store.accounts, { tier: 'pro', livePrefix: livePrefix(config), now: Date.now() }))
      .key;
    // Arrivals by article id; a push answers the id of each stored line (a line the near-duplicate rule
    // merges is not published, so only stored ids are awaited).
    const arrived = new Map<string, number>();
    const waiters = new Map<string, () => void>();
    const ws = new WebSocket(`${svc.url.replace(/^http/, 'ws')}/v1/stream?api_key=${key}`);
    ws.on('message', (m) => {
      const a = JSON.parse(m.toString()) as { id: string };
      arrived.set(a.id, performance.now());
      waiters.get(a.id)?.();
    });
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    const arrival = (id: string) =>
      arrived.has(id) ? Promise.resolve() : new Promise<void>((r) => waiters.set(id, r));
    const push = async (lines: { source: string; id: string; content: string }[]): Promise<string[]> => {
      const res = await fetch(`${svc.adminUrl}/admin/v1/articles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
        body: lines.map((l) => JSON.stringify(l)).join('\n'),
      });
      if (!res.ok) throw new Error(`push answered ${res.status}: ${await res.text()}`);
      const body = (await res.json()) as { results: { status: string; id?: string }[] };
      return body.results.filter((r) => r.status === 'stored').map((r) => r.id!);
    };

    // Warm-up (first connections, JIT), not measured.
    for (let i = 0; i < 5; i++)
      await arrival(
        (await push([{ source: 'warm', id: `w-${i}`, content: `Warm-up line number ${i} of the benchmark` }]))[0]!,
      );
    const delays: number[] = [];
    for (let i = 0; i < ARTICLES; i++) {
      const t0 = performance.now();
      const [id] = await push([
        { source: 'bench', id: `single-${i}`, content: `${texts[i % texts.length]} (single ${i})` },
      ]);
      if (id === undefined) continue;
      await arrival(id);
      delays.push(arrived.get(id)! - t0);
      await sleep(25);
    }
    console.log(
      `3. one article at a time (${delays.length} stored of ${ARTICLES}): push -> stream p50 ${quantile(delays, 0.5).toFixed(1)} ms, p99 ${quantile(delays, 0.99).toFixed(1)} ms, max ${Math.max(...delays).toFixed(1)} ms (goal p99 <= 50 ms)`,
    );

    const lines = Array.from({ length: BACKFILL }, (_, i) => ({
      source: 'backfill',
      id: `b-${i}`,
      content: `${texts[(i + ARTICLES) % texts.length]} (backfill ${i})`,
    }));
    const t0 = performance.now();
    const stored: string[] = [];
    for (let i = 0; i < lines.length; i += 1000) stored.push(...(await push(lines.slice(i, i + 1000))));
    await Promise.all(stored.map(arrival));
    const s = (performance.now() - t0) / 1000;
    console.log(
      `4. backfill of ${BACKFILL} pushed in bodies of 1,000 (${stored.length} stored, the rest merged as duplicates): all stored ones on the stream in ${s.toFixed(1)} s, ${Math.round(BACKFILL / s)} items/s (goal >= 300/s); the model's own share ${((model * BACKFILL) / 1e6).toFixed(2)} s of CPU`,
    );
    ws.close();
  } finally {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();

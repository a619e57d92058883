/**
 * `fns demo`: a fresh instance with a sample archive, a key per tier, and two polled sample wires so the stream moves.
 */
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/index.js';
import { limits } from '../contract/index.js';
import { parseNdjson } from '../ingest/parse.js';
import { EmbeddingWorker } from '../indexing/index.js';
import { createLogger } from '../ops/logger.js';
import { embedderFor, livePrefix, startService } from '../server/index.js';
import { startDemoFeeds } from '../sources/demo-feeds.js';
import { sqliteFile } from '../store/index.js';
import { SqliteStore } from '../store/sqlite/index.js';
import { cancel, createKey } from './operator.js';
import { demoDataDir } from './demo-data.js';

/** How often the demo polls its two sample sources (each publishes a new headline every few seconds). */
const DEMO_POLL_MS = 2000;

/** What the demo's IP guard never blocks (on top of IP_GUARD_EXEMPT). */
const DEMO_EXEMPT = 'loopback';

const SAMPLE = fileURLToPath(new URL('../../fixtures/demo-articles.ndjson', import.meta.url));

/** The demo's config: the embedded store in DATA_DIR/demo, on loopback, its own wires allowed. */
function demoConfig(base: Config): Config {
  // The demo is the embedded default, whatever DATABASE_URL / REDIS_URL say (it deletes its data on start).
  const { databaseUrl, redisUrl, ...embedded } = base;
  if (databaseUrl || redisUrl)
    console.error('demo: ignoring DATABASE_URL / REDIS_URL: the demo runs on its own SQLite file in DATA_DIR/demo');
  return {
    ...embedded,
    dataDir: demoDataDir(base.dataDir),
    // A newcomer trying all five keys from this machine must not be locked out by the IP guard.
    host: base.host ?? '127.0.0.1',
    ipGuardExempt: [...base.ipGuardExempt, DEMO_EXEMPT],
    // Its sample wires are served on loopback.
    feedAllowPrivate: true,
  };
}

type DemoKeys = Record<string, { key: string; key_id: string; account_id: string }>;
type DemoSource = { name: string; format: string; url: string };

function printDemo(
  json: boolean,
  d: { url: string; dataDir: string; articles: number; keys: DemoKeys; sources: DemoSource[] },
): void {
  const { keys, sources } = d;
  if (json) {
    console.log(
      JSON.stringify({
        url: d.url,
        status_page: `${d.url}/status`,
        articles: d.articles,
        keys,
        sources: sources.map((x) => ({ name: x.name, url: x.url, every_ms: DEMO_POLL_MS })),
      }),
    );
    return;
  }
  console.log(`\nFinancial News Service demo: ${d.url}  (${d.articles} sample articles over the last 6 days)\n`);
  console.log('Keys (shown once; this demo archive is recreated on every run):');
  for (const [tier, k] of Object.entries(keys)) console.log(`  ${tier.padEnd(8)} ${k.key}`);
  console.log('\nTry:');
  console.log(`  curl -s -H "X-API-Key: ${keys.max!.key}" "${d.url}/v1/news?limit=3"`);
  console.log(`  curl -s -H "X-API-Key: ${keys.max!.key}" "${d.url}/v1/news/search?q=central+bank+tightening&limit=3"`);
  console.log(`  curl -s -H "X-API-Key: ${keys.starter!.key}" "${d.url}/v1/account/usage"`);
  console.log(`\nStatus page (no key; the same report as JSON at /v1/status): ${d.url}/status`);
  const g = limits.ipGuard;
  console.log(
    `\nThe IP guard (${g.distinctKeys} different keys from one address within ${g.windowMs / 1000} s block it for ${g.blockMs / 60_000} minutes)`,
  );
  console.log(
    `exempts ${DEMO_EXEMPT} in this demo (IP_GUARD_EXEMPT), so every key above can be tried from this machine.`,
  );
  console.log(
    `\nLive sources, polled every ${DEMO_POLL_MS / 1000} s (a new headline every few seconds; one story in four is carried by both`,
  );
  console.log('wires, reworded, and reaches the stream once):');
  for (const x of sources) console.log(`  ${x.name.padEnd(12)} ${x.format.padEnd(5)} ${x.url}`);
  const ws = d.url.replace(/^http/, 'ws');
  console.log('Watch them arrive on the stream (from this directory):');
  console.log(
    `  node -e "new (require('ws'))('${ws}/v1/stream?api_key=${keys.pro!.key}').on('message', (m) => console.log(JSON.parse(m).content))"`,
  );
  console.log(`What each source did, and a source of your own (fns commands reach this demo with its DATA_DIR):`);
  console.log(`  DATA_DIR=${d.dataDir} npx fns sources list`);
  console.log(`  DATA_DIR=${d.dataDir} npx fns sources add my-wire https://example.com/markets.rss --every 30s`);
  console.log(`  echo '{"content":"FLASH: hello stream"}' | DATA_DIR=${d.dataDir} npx fns articles ingest -`);
  console.log(`  DATA_DIR=${d.dataDir} npx fns status note "Harbor Wire is late today; we are on it"`);
  console.log('\nCtrl+C to stop.');
}

export async function runDemo(base: Config, opts: { json: boolean }): Promise<void> {
  const config = demoConfig(base);
  rmSync(config.dataDir, { recursive: true, force: true });
  const now = Date.now();
  const store = new SqliteStore(sqliteFile(config));
  const { articles } = parseNdjson(readFileSync(SAMPLE, 'utf8'));
  // Oldest first, spread over six days: a starter key (24 h) sees the newest few, pro/max all of them.
  const span = 6 * 24 * 3600 * 1000;
  for (let i = 0; i < articles.length; i++) {
    const age = Math.round((span * (articles.length - 1 - i)) / articles.length) + 60_000;
    await store.articles.insert([articles[articles.length - 1 - i]!], now - age);
  }
  const prefix = livePrefix(config);
  const keys: DemoKeys = {};
  for (const tier of ['starter', 'pro', 'max', 'free'] as const)
    keys[tier] = await createKey(store.accounts, { tier, livePrefix: prefix, now });
  keys.expired = await createKey(store.accounts, { tier: 'pro', livePrefix: prefix, now });
  await cancel(store.accounts, keys.expired.account_id, now);

  const feeds = await startDemoFeeds();
  const sources = [
    { name: 'harbor-wire', format: 'RSS', url: feeds.rssUrl },
    { name: 'summit-wire', format: 'Atom', url: feeds.atomUrl },
  ];
  for (const src of sources)
    await store.sources.add({ name: src.name, url: src.url, everyMs: DEMO_POLL_MS, urgency: 'auto' }, now);

  // Ready when it says so: the sample archive is searchable before the "Try:" lines are printed.
  const embedder = embedderFor(config);
  console.error(`demo: embedding ${articles.length} sample articles for search…`);
  try {
    await new EmbeddingWorker(store.vectors, embedder).drain();
  } catch (err) {
    console.error(`demo: search is not ready (${(err as Error).message}); list, usage and the stream work`);
  }
  store.close();

  // The service's log on stderr, the keys and first requests on stdout.
  const logger = createLogger({ destination: process.stderr, pretty: process.stderr.isTTY === true });
  const svc = await startService(config, { logger, embedder });
  await svc.searchReady.catch(() => {});
  printDemo(opts.json, { url: svc.url, dataDir: config.dataDir, articles: articles.length, keys, sources });
  const stop = async () => {
    await svc.close();
    await feeds.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

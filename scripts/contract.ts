/**
 * `npm run contract`: starts the real service on a seeded temporary archive and runs Dredd against
 * openapi.yaml with hooks that exercise every documented status (test/contract/dredd-hooks.cjs).
 * Embeddings come from a small OpenAI-compatible server started here (the real HTTP provider talks to
 * it), which fails on purpose for one query so the 503 path is exercised for real.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/index.js';
import { createKey } from '../src/cli/operator.js';
import { parseNdjson } from '../src/ingest/parse.js';
import { livePrefix, startService } from '../src/server/index.js';
import { openapiDocument, plans } from '../src/contract/index.js';
import { hashKey } from '../src/store/ports/ids.js';
import { startTrigramEmbeddings, TRIGRAM_MODEL } from './lib/trigram-embeddings.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const OUTAGE = 'embedding outage drill';

async function main(): Promise<number> {
  const embeddings = await startTrigramEmbeddings({ failOn: OUTAGE });
  const embeddingsUrl = embeddings.url;

  const dir = mkdtempSync(join(tmpdir(), 'fns-contract-'));
  const config = {
    ...loadConfig({ DATA_DIR: dir, TRUST_PROXY: '1', EMBEDDINGS_URL: embeddingsUrl, EMBEDDINGS_MODEL: TRIGRAM_MODEL }),
    port: 0,
    host: '127.0.0.1',
  };
  const svc = await startService(config, { log: (m) => console.log(`service: ${m}`) });
  try {
    const now = Date.now();
    const { articles } = parseNdjson(readFileSync(join(root, 'fixtures', 'demo-articles.ndjson'), 'utf8'));
    await svc.store.articles.insert(articles, now - 60_000);
    await svc.worker.drain();
    const prefix = livePrefix(config);
    const key = async (tier: 'starter' | 'pro' | 'max') =>
      (await createKey(svc.store.accounts, { tier, livePrefix: prefix, now })).key;
    const inactive = await createKey(svc.store.accounts, { tier: 'max', livePrefix: prefix, now });
    await svc.store.accounts.setKeyActive(inactive.key_id, false);
    // A database outage drill: lookups of this one key fail as an unreachable database would, so the
    // documented 503 of every operation is exercised for real through the service's error path.
    const outage = await key('max');
    const outageHash = hashKey(outage);
    const findKey = svc.store.accounts.findKey.bind(svc.store.accounts);
    svc.store.accounts.findKey = async (keyHash: string) => {
      if (keyHash === outageHash) throw Object.assign(new Error('database outage drill'), { unavailable: true });
      return findKey(keyHash);
    };
    const keys = {
      outage,
      max: await key('max'),
      pro: await key('pro'),
      inactive: inactive.key,
      starterExhausted: await key('starter'),
      maxExhausted: await key('max'),
      outageQuery: OUTAGE,
    };
    // Use up the limits of the two "exhausted" keys, each from its own client address.
    const exhaust = async (k: string, limit: number, n: number) => {
      for (let i = 0; i < limit; i++) {
        const r = await fetch(`${svc.url}/v1/news?limit=1`, {
          headers: { 'X-API-Key': k, 'X-Forwarded-For': `203.0.113.${n}` },
        });
        if (r.status !== 200) throw new Error(`seeding: expected 200, got ${r.status}`);
      }
    };
    await exhaust(keys.starterExhausted, plans.starter.rateLimit, 1);
    await exhaust(keys.maxExhausted, plans.max.rateLimit, 2);
    console.log(
      `contract: service at ${svc.url}, ${articles.length} articles, running Dredd against generated/openapi.json`,
    );

    const code = await new Promise<number>((resolveCode) => {
      const child = spawn(
        join(root, 'node_modules', '.bin', 'dredd'),
        [
          join(root, 'generated', 'openapi.json'),
          svc.url,
          '--hookfiles',
          join(root, 'test', 'contract', 'dredd-hooks.cjs'),
          '--loglevel',
          'error',
          '--reporter',
          'dot',
        ],
        {
          stdio: 'inherit',
          env: {
            ...process.env,
            FNS_CONTRACT_KEYS: JSON.stringify(keys),
            FNS_OPENAPI_JSON: join(root, 'generated', 'openapi.json'),
            NODE_OPTIONS: '--no-warnings',
          },
        },
      );
      child.on('exit', (c) => resolveCode(c ?? 1));
      child.on('error', (err) => {
        console.error(`contract: could not run Dredd: ${err.message}`);
        resolveCode(1);
      });
    });
    const documented = Object.values<any>(openapiDocument().paths).reduce(
      (n, item) => n + Object.values<any>(item).reduce((m, op) => m + Object.keys(op.responses).length, 0),
      0,
    );
    console.log(`contract: openapi.yaml documents ${documented} (operation, status) pairs; Dredd exit code ${code}`);
    return code;
  } finally {
    await svc.close();
    embeddings.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

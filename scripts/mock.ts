/**
 * `npm run mock`: the partner mock on one loopback port (REST through Prism + the /v1/stream firehose),
 * playing every tier with the sandbox keys. The only module of the mock that reads the environment:
 *   PORT                     port of the mock (default 4010)
 *   MOCK_STREAM_INTERVAL_MS  one stream article every … ms (default 2000)
 *   FNS_BRAND                brand word of the key prefixes (default fns → fns_test_…)
 *   MOCK_WEBHOOK_URL         POST a signed sample `article` webhook there every MOCK_WEBHOOK_INTERVAL_MS
 *   MOCK_WEBHOOK_INTERVAL_MS default 5000
 */
import { limits, plans, tiers, webhookRules } from '../src/contract/index.js';
import { staleGenerated } from '../src/contract/freshness.js';
import { startMock } from '../src/mock/index.js';

// The mock serves generated/ (Prism reads generated/openapi.json): refuse to serve a stale copy of an
// edited openapi.yaml / asyncapi.yaml.
const stale = staleGenerated();
if (stale !== undefined) {
  console.error(`[mock] ${stale}`);
  process.exit(1);
}

function intFromEnv(name: string, dflt: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    console.error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
    process.exit(2);
  }
  return Number(raw);
}

const port = intFromEnv('PORT', 4010, 0, 65535);
const streamIntervalMs = intFromEnv('MOCK_STREAM_INTERVAL_MS', 2000, 10, 3_600_000);
const webhookIntervalMs = intFromEnv('MOCK_WEBHOOK_INTERVAL_MS', 5000, 100, 3_600_000);
const webhookUrl = process.env.MOCK_WEBHOOK_URL || undefined;
if (webhookUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(webhookUrl)) {
  console.error(`MOCK_WEBHOOK_URL must be an http:// or https:// URL, got "${webhookUrl}"`);
  process.exit(2);
}
const brand = process.env.FNS_BRAND ?? 'fns';
if (!/^[a-z][a-z0-9]{1,15}$/.test(brand)) {
  console.error(`FNS_BRAND must be 2-16 lower-case letters or digits, got "${brand}"`);
  process.exit(2);
}
const testPrefix = limits.keyPrefixes.test.replace(/^fns_/, `${brand}_`);

const log = (m: string) => console.log(`[mock] ${m}`);
log(`starting the mock on 127.0.0.1:${port} (stream: one article every ${streamIntervalMs} ms)`);

let mock: Awaited<ReturnType<typeof startMock>>;
try {
  mock = await startMock({
    port,
    host: '127.0.0.1',
    streamIntervalMs,
    testPrefix,
    prismEnv: process.env,
    log,
    ...(webhookUrl ? { webhookUrl, webhookIntervalMs } : {}),
  });
} catch (err) {
  console.error(`[mock] could not start: ${(err as Error).message}`);
  process.exit(1);
}

const what = (t: (typeof tiers)[number]) => {
  const p = plans[t];
  if (p.rateLimit === 0) return 'blocked: 403 "API key is inactive" except usage; stream closed 1008';
  return [
    `${p.rateLimit} req/min`,
    p.search ? 'search' : 'no search',
    p.stream ? 'stream' : 'no stream',
    p.tickers ? 'tickers' : 'no tickers',
  ].join(', ');
};
const wsUrl = mock.url.replace(/^http/, 'ws');
console.log(`
Mock ready on ${mock.url}
  REST    ${mock.url}/v1/news  ${mock.url}/v1/news/search?q=…  ${mock.url}/v1/account/usage
  stream  ${wsUrl}/v1/stream?api_key=<key>

Sandbox keys (X-API-Key header; api_key query parameter for the stream):
${tiers.map((t) => `  ${mock.keys[t].padEnd(testPrefix.length + 8)} ${t.padEnd(8)} ${what(t)}`).join('\n')}
  Any other key (other ${testPrefix}… names, ${limits.keyPrefixes.live.replace(/^fns_/, `${brand}_`)}… keys) → 401 "Invalid API key".

${
  webhookUrl
    ? `Webhooks: a signed sample article to ${webhookUrl} every ${webhookIntervalMs} ms, signed with the sandbox secret
  ${webhookRules.sandboxSecret}
`
    : `Webhooks: set MOCK_WEBHOOK_URL=<your receiver> to get a signed sample article every 5 s (docs/mock.md).
`
}
Try:
  curl -s -H 'X-API-Key: ${mock.keys.max}' ${mock.url}/v1/news
  curl -s -H 'X-API-Key: ${mock.keys.pro}' -H 'Prefer: code=429' ${mock.url}/v1/news

Ctrl-C to stop.`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping (closing streams, stopping Prism) …`);
  const force = setTimeout(() => process.exit(1), 5000);
  force.unref();
  await mock.close();
  log('stopped');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

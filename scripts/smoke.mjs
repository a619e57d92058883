#!/usr/bin/env node
// The smoke set CI runs on every supported Node.js (and first on the one that runs `npm test`): after
// `npm ci`, a fresh `fns demo` must start and answer the README's first requests (list, search, usage),
// a stream connection must receive an article, the `fns` command line must work (help, group help,
// keys, sources, articles ingest reaching the running demo's stream), and `npm run mock`'s script (tsx
// and Prism) must serve REST and its stream. Plain JavaScript: it runs on the Node under test with
// nothing but the installed packages. Exits 1 on the first failure, naming the check.
//
//   node scripts/smoke.mjs            (CI: after npm ci, on each Node version)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const root = fileURLToPath(new URL('..', import.meta.url));
const fns = join(root, 'bin', 'fns.mjs');
const dataDir = mkdtempSync(join(tmpdir(), 'fns-smoke-'));
const demoDir = join(dataDir, 'demo');
const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };
delete env.DATABASE_URL;
delete env.REDIS_URL;
const started = Date.now();
let checks = 0;

function ok(what) {
  checks++;
  console.log(`smoke: ok   ${what}`);
}
function fail(what) {
  throw new Error(`smoke: FAIL ${what}`);
}
function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error(`smoke: FAIL ${what}: no answer within ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(timer));
}
function cli(args, input, extraEnv = {}) {
  return spawnSync(process.execPath, [fns, ...args], {
    env: { ...env, ...extraEnv },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/**
 * Starts a child process; `ready` resolves with what `readyFrom` finds in its standard output so far
 * (undefined: not yet), and rejects with its standard error if it exits first.
 */
function startChild(what, args, childEnv, readyFrom) {
  const child = spawn(process.execPath, args, { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const ready = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const found = readyFrom(out);
      if (found !== undefined) resolve(found);
    });
    child.on('exit', (code, signal) =>
      reject(new Error(`smoke: FAIL ${what} exited (${code ?? signal}) before it was ready:\n${stderr}`)),
    );
  });
  return { child, ready };
}

/** `npm run mock`'s script (tsx + Prism) on a free port; ready with its URL. */
const startMockProcess = () =>
  startChild(
    'mock',
    [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(root, 'scripts', 'mock.ts')],
    { ...env, PORT: '0', MOCK_STREAM_INTERVAL_MS: '100' },
    (out) => /Mock ready on (http:\/\/\S+)/.exec(out)?.[1],
  );

/** `fns demo --json`; ready with its first line (url, keys) once it listens. */
const startDemo = () =>
  startChild('demo', [fns, 'demo', '--json', '--port', '0'], env, (out) => {
    const nl = out.indexOf('\n');
    return nl >= 0 ? JSON.parse(out.slice(0, nl)) : undefined;
  });

function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.kill('SIGTERM');
  return new Promise((r) => child.once('exit', r));
}

async function getJson(url, key) {
  const res = await fetch(url, { headers: { 'X-API-Key': key } });
  const body = await res.json();
  if (res.status !== 200) fail(`${url}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Opens a stream; resolves with the first article whose content passes `want`. */
function firstArticle(wsUrl, key, want, what) {
  const ws = new WebSocket(`${wsUrl}/v1/stream?api_key=${encodeURIComponent(key)}`);
  const got = new Promise((resolve, reject) => {
    ws.on('message', (m) => {
      const a = JSON.parse(m.toString());
      if (want(a)) resolve(a);
    });
    ws.on('close', (code, reason) => reject(new Error(`smoke: FAIL ${what}: stream closed ${code} ${reason}`)));
    ws.on('error', reject);
  });
  const opened = new Promise((resolve, reject) => {
    ws.on('open', resolve);
    ws.on('error', reject);
  });
  return { ws, opened, got };
}

const demo = startDemo();
const mock = startMockProcess();
try {
  const help = cli(['--help']);
  if (help.status !== 0 || !help.stdout.includes('Usage: fns'))
    fail(`fns --help (exit ${help.status}): ${help.stderr}`);
  ok('fns --help');
  const group = cli(['sources', '--help']);
  if (group.status !== 0 || !group.stdout.includes('fns sources add'))
    fail(`fns sources --help (exit ${group.status})`);
  ok('fns sources --help');

  const { url, keys, articles } = await withTimeout(demo.ready, 120_000, 'demo start');
  ok(`fns demo started on ${url} with ${articles} sample articles`);
  const list = await getJson(`${url}/v1/news?limit=3`, keys.max.key);
  if (!Array.isArray(list.articles) || list.articles.length !== 3) fail(`list: ${JSON.stringify(list).slice(0, 200)}`);
  ok('GET /v1/news?limit=3 (max key): 3 articles');
  const found = await getJson(`${url}/v1/news/search?q=central+bank+tightening&limit=3`, keys.max.key);
  if (!Array.isArray(found.articles) || found.articles.length === 0)
    fail(`search: ${JSON.stringify(found).slice(0, 200)}`);
  ok(`GET /v1/news/search (max key): ${found.articles.length} articles`);
  const usage = await getJson(`${url}/v1/account/usage`, keys.starter.key);
  if (usage.tier !== 'starter') fail(`usage: ${JSON.stringify(usage)}`);
  ok('GET /v1/account/usage (starter key)');

  const wsUrl = url.replace(/^http/, 'ws');
  const live = firstArticle(wsUrl, keys.pro.key, () => true, 'stream (live wires)');
  await withTimeout(live.opened, 10_000, 'stream open');
  await withTimeout(live.got, 30_000, "an article from the demo's live wires on the stream");
  live.ws.close();
  ok('stream (pro key): an article from the live sample wires');

  const marker = `SMOKE ${process.version} ${Date.now()}: hello stream`;
  const pushed = firstArticle(wsUrl, keys.max.key, (a) => a.content === marker, 'stream (ingested article)');
  await withTimeout(pushed.opened, 10_000, 'stream open');
  const ingest = cli(['articles', 'ingest', '-'], `${JSON.stringify({ content: marker })}\n`, { DATA_DIR: demoDir });
  if (ingest.status !== 0) fail(`fns articles ingest (exit ${ingest.status}): ${ingest.stderr}`);
  await withTimeout(pushed.got, 15_000, 'the ingested article on the stream');
  pushed.ws.close();
  ok('fns articles ingest - into the demo: the article reaches the stream');

  const sources = cli(['sources', 'list', '--json'], undefined, { DATA_DIR: demoDir });
  if (sources.status !== 0 || JSON.parse(sources.stdout).length < 2)
    fail(`fns sources list (exit ${sources.status}): ${sources.stdout}${sources.stderr}`);
  ok('fns sources list --json on the demo: its sample wires');
  const key = cli(['keys', 'create', '--tier', 'pro', '--json'], undefined, { DATA_DIR: join(dataDir, 'own') });
  if (key.status !== 0 || !JSON.parse(key.stdout).key) fail(`fns keys create (exit ${key.status}): ${key.stderr}`);
  ok('fns keys create --tier pro --json');

  const mockUrl = await withTimeout(mock.ready, 120_000, 'mock start');
  const mockList = await getJson(`${mockUrl}/v1/news?limit=2`, 'fns_test_max');
  if (!Array.isArray(mockList.articles)) fail(`mock list: ${JSON.stringify(mockList).slice(0, 200)}`);
  ok(`npm run mock (tsx + Prism) on ${mockUrl}: GET /v1/news with fns_test_max`);
  const mockStream = firstArticle(mockUrl.replace(/^http/, 'ws'), 'fns_test_pro', () => true, "the mock's stream");
  await withTimeout(mockStream.got, 15_000, "an article on the mock's stream");
  mockStream.ws.close();
  ok("the mock's stream (fns_test_pro): an article");
  console.log(`smoke: node ${process.version}: ${checks} checks ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
} finally {
  await Promise.all([stop(demo.child), stop(mock.child)]);
  rmSync(dataDir, { recursive: true, force: true });
}

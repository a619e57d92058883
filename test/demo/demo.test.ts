/**
 * `npm run demo` as a newcomer runs it: every printed "Try:" line answers as written, search
 * included, the moment it is printed; all five keys can be tried from this machine within a minute;
 * stopping npm stops the demo and frees its port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plans, type Tier } from '../../src/contract/index.js';
import { get } from '../support/service.js';
import { repoRoot } from '../support/specs.js';
import { until } from '../support/wait.js';

let child: ChildProcess;
let out = '';
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'fns-demo-'));
  // As a newcomer types it: through npm, which must pass a stop on to the demo.
  child = spawn('npm', ['run', '--silent', 'demo'], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', () => {});
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not print its Try lines:\n${out}`)), 90_000);
    child.stdout!.on('data', () => {
      if (out.includes('Ctrl+C to stop')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`demo exited with ${code}:\n${out}`)));
  });
}, 120_000);

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** The printed `curl -s -H "X-API-Key: …" "<url>"` lines, as (key, url). */
function tryLines(): { key: string; url: URL }[] {
  return [...out.matchAll(/curl -s -H "X-API-Key: (\S+)" "(\S+)"/g)].map((m) => ({ key: m[1]!, url: new URL(m[2]!) }));
}

describe('npm run demo: ready when it says so', () => {
  it('binds loopback and prints one key per tier', () => {
    const url = new URL(/demo: (\S+)/.exec(out)![1]!);
    expect(url.hostname).toBe('127.0.0.1');
    for (const tier of ['starter', 'pro', 'max', 'free', 'expired'] as Tier[])
      expect(out).toMatch(new RegExp(`^  ${tier}\\s+fns_live_\\S+$`, 'm'));
  });

  it('answers every printed Try line with 200, the search line with results', async () => {
    const lines = tryLines();
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const { key, url } of lines) {
      const r = await get(Number(url.port), url.pathname + url.search, { key });
      expect(r.status, url.pathname).toBe(200);
      if (url.pathname.endsWith('/search')) expect(r.body.count).toBeGreaterThan(0);
    }
  });

  it('lets all five keys be tried from this machine within a minute (the IP guard exempts loopback)', async () => {
    const port = Number(tryLines()[0]!.url.port);
    for (const m of out.matchAll(/^  (starter|pro|max|free|expired)\s+(fns_live_\S+)$/gm)) {
      const r = await get(port, '/v1/account/usage', { key: m[2]! });
      expect(r.status, m[1]).toBe(200);
      expect(r.body.rate_limit).toBe(plans[m[1] as Tier].rateLimit);
    }
    expect(out).toContain('exempts loopback');
  });

  it('polls its two sample wires on loopback (it allows private feed addresses for itself, FEED_ALLOW_PRIVATE)', async () => {
    const port = Number(tryLines()[0]!.url.port);
    const key = /^  max\s+(fns_live_\S+)$/m.exec(out)![1]!;
    const sources = async () =>
      new Set(
        ((await get(port, '/v1/news?limit=100', { key })).body.articles as { source: string }[]).map((a) => a.source),
      );
    await until(
      async () => (await sources()).has('harbor-wire') && (await sources()).has('summit-wire'),
      'articles from both demo wires',
      8_000,
      200,
    );
  });

  it('stops, and frees its port, when npm is stopped', async () => {
    const port = Number(tryLines()[0]!.url.port);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    await exited;
    const refused = await new Promise<boolean>((resolve) => {
      const deadline = Date.now() + 10_000;
      const attempt = () => {
        const s = connect(port, '127.0.0.1');
        s.on('connect', () => {
          s.destroy();
          if (Date.now() > deadline) resolve(false);
          else setTimeout(attempt, 100);
        });
        s.on('error', () => resolve(true));
      };
      attempt();
    });
    expect(refused).toBe(true);
  });
});

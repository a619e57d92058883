/**
 * The operator's story with feed sources, as real processes: `fns sources add` for two local feeds (RSS and
 * Atom, on the fixture server) and a broken one, `fns serve`, and a stream client that sees each new
 * item once, including a story both feeds carry; `fns sources run` alongside changes nothing (leases);
 * `fns sources list` tells the truth about the broken source.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EXIT } from '../../src/cli/errors.js';
import { fnsBin, tempDataDir } from '../cli/support.js';
import { startFixtureServer, type FixtureServer } from './fixture-server.js';
import { until } from '../support/wait.js';

/** The CLI is a process per call: wait longer, ask less often. */
const CLI_WAIT_MS = 15_000;

const data = tempDataDir('fns-sources-op-');
const children: ChildProcess[] = [];
let feeds: FixtureServer;
// FEED_ALLOW_PRIVATE: the feeds of this story are on loopback.
const env = {
  PORT: '0',
  HOST: '127.0.0.1',
  FEED_ALLOW_PRIVATE: 'true',
  EMBEDDINGS_URL: 'http://127.0.0.1:9/v1/embeddings',
  EMBEDDINGS_MODEL: 'unused',
};

beforeAll(async () => {
  feeds = await startFixtureServer();
  feeds.setFeed('/harbor.rss', {
    format: 'rss',
    items: [{ id: 'h-1', title: 'Copper holds steady as Chilean mine strike ends', link: 'https://example.com/h/1' }],
  });
  feeds.setFeed('/summit.atom', {
    format: 'atom',
    items: [{ id: 's-1', title: 'Bank of Japan keeps yield-curve control unchanged', link: 'https://example.com/s/1' }],
  });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await feeds.close();
  data.remove();
});

/** Starts a long-running `fns` command; resolves once its output matches `ready`. */
async function start(
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; out: () => string; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [fnsBin, ...args], {
    env: { ...process.env, ...env, DATA_DIR: data.dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`not ready: ${out}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    const check = () => {
      const m = ready.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
  });
  return { child, out: () => out, match };
}

interface Listed {
  name: string;
  last_status: number | null;
  last_error: string | null;
  next_poll_at: string | null;
  last_poll_at: string | null;
  failures: number;
  items_seen: number;
  items_ingested: number;
  items_deduplicated: number;
}
const listed = async (): Promise<Listed[]> => JSON.parse((await data.fns('sources', 'list', '--json')).stdout).sources;

describe('an operator adds two local feeds, runs fns serve, and a stream client sees each new item once', () => {
  let serve: Awaited<ReturnType<typeof start>>;
  let runner: Awaited<ReturnType<typeof start>>;
  const received: string[] = [];

  it('fns sources add, then fns serve and fns sources run, then a stream client', async () => {
    expect((await data.fns('sources', 'add', 'harbor', feeds.url('/harbor.rss'), '--every', '1s')).code).toBe(EXIT.ok);
    expect((await data.fns('sources', 'add', 'summit', feeds.url('/summit.atom'), '--every', '1s')).code).toBe(EXIT.ok);
    expect((await data.fns('sources', 'add', 'broken', feeds.url('/status/500'), '--every', '1s')).code).toBe(EXIT.ok);
    const key = JSON.parse((await data.fns('keys', 'create', '--tier', 'pro', '--json')).stdout).key as string;

    serve = await start(['serve'], /listening on (http:\/\/\S+)/);
    // A second poller in its own process: leases keep every source to one poller at a time.
    runner = await start(['sources', 'run'], /polling \d+ active source\(s\)/);
    // What was there before the client connected was ingested already (first polls).
    await until(
      async () => (await listed()).filter((s) => s.items_ingested === 1).length === 2,
      'the first polls',
      CLI_WAIT_MS,
      50,
    );

    const ws = new WebSocket(`${serve.match[1]!.replace(/^http/, 'ws')}/v1/stream?api_key=${key}`);
    ws.on('message', (m) => received.push(JSON.parse(m.toString()).content));
    await once(ws, 'open');

    feeds.addItems('/harbor.rss', {
      id: 'h-2',
      title: 'Apple shares rise after iPhone sales top estimates',
      link: 'https://example.com/h/2',
    });
    feeds.addItems('/summit.atom', {
      id: 's-2',
      title: 'Microsoft wins $2 billion cloud contract',
      link: 'https://example.com/s/2',
    });
    await until(() => received.length === 2, 'the first two new items', CLI_WAIT_MS, 50);
    // One story on both wires: the same article URL apart from tracking parameters, reworded.
    feeds.addItems('/harbor.rss', {
      id: 'h-3',
      title: 'Intel to cut 15% of jobs in turnaround plan',
      link: 'https://example.com/story/intel?utm_source=harbor',
    });
    feeds.addItems('/summit.atom', {
      id: 's-3',
      title: 'Intel plans to cut 15% of its jobs in turnaround push',
      link: 'https://example.com/story/intel?utm_source=summit#top',
    });
    feeds.addItems('/harbor.rss', {
      id: 'h-4',
      title: 'Oil slips as OPEC+ weighs output increase',
      link: 'https://example.com/h/4',
    });
    // Either wire may be polled first after the items were added: the shared story is stored from one and
    // counted as a duplicate on the other.
    await until(
      async () => {
        const wires = (await listed()).filter((x) => x.name !== 'broken');
        const sum = (k: 'items_ingested' | 'items_deduplicated') => wires.reduce((n, x) => n + x[k], 0);
        return sum('items_ingested') >= 6 && sum('items_deduplicated') >= 1 && received.length >= 4;
      },
      'the shared story and one more item',
      CLI_WAIT_MS,
      50,
    );
    // Several more polls of every feed: nothing arrives twice.
    const polls = feeds.hits('/harbor.rss').length + feeds.hits('/summit.atom').length;
    await until(
      () => feeds.hits('/harbor.rss').length + feeds.hits('/summit.atom').length >= polls + 6,
      'more polls',
      CLI_WAIT_MS,
      50,
    );
    // A last item on each wire, after those polls: the stream is in commit order, so once both are in,
    // whatever the earlier polls stored has arrived too.
    const last = ['Copper futures climb on Chilean mine strike', 'Japanese yen weakens past 160 per dollar'];
    feeds.addItems('/harbor.rss', { id: 'h-5', title: last[0]!, link: 'https://example.com/h/5' });
    feeds.addItems('/summit.atom', { id: 's-5', title: last[1]!, link: 'https://example.com/s/5' });
    await until(() => last.every((c) => received.includes(c)), 'the last item of each wire', CLI_WAIT_MS, 50);
    ws.close();
    received.splice(0, received.length, ...received.filter((c) => !last.includes(c)));

    expect(new Set(received).size).toBe(received.length);
    const intel = received.filter((c) => c.startsWith('Intel'));
    expect(intel).toHaveLength(1);
    expect(received.filter((c) => !c.startsWith('Intel')).sort()).toEqual([
      'Apple shares rise after iPhone sales top estimates',
      'Microsoft wins $2 billion cloud contract',
      'Oil slips as OPEC+ weighs output increase',
    ]);
    const sources = await listed();
    const dedup = sources.filter((s) => s.name !== 'broken').reduce((n, s) => n + s.items_deduplicated, 0);
    expect(dedup).toBe(1);
  }, 90_000);

  it('fns sources list tells the truth about the broken source', async () => {
    const broken = (await listed()).find((s) => s.name === 'broken')!;
    expect(broken.last_status).toBe(500);
    expect(broken.last_error).toMatch(/^http: /);
    expect(broken.failures).toBeGreaterThanOrEqual(1);
    expect(Date.parse(broken.next_poll_at!)).toBeGreaterThan(Date.parse(broken.last_poll_at!));
    expect(broken.items_ingested).toBe(0);
    const table = (await data.fns('sources', 'list')).stdout;
    expect(table).toMatch(/^broken\s+failing\(\d+\)\s+1s\s+\S+ ago\s+500\s+0\s+0\s+0\s+in \S+$/m);
    expect(table).toMatch(/^ {2}last error: http: /m);
  }, 30_000);

  it('both processes stop cleanly on SIGTERM', async () => {
    for (const p of [runner, serve]) {
      expect(p.child.exitCode, 'still running').toBeNull();
      const exited = once(p.child, 'exit');
      p.child.kill('SIGTERM');
      expect((await exited)[0]).toBe(0);
    }
    expect(runner.out()).toContain('fns: stopped');
  }, 30_000);
});

/** `fns serve` as a real process: REST and the stream on one port; SIGTERM closes streams with 1001 and exits. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { repoRoot } from '../support/specs.js';

const dir = mkdtempSync(join(tmpdir(), 'fns-serve-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const bin = join(repoRoot, 'bin', 'fns.mjs');
const env = {
  ...process.env,
  DATA_DIR: dir,
  PORT: '0',
  HOST: '127.0.0.1',
  EMBEDDINGS_URL: 'http://127.0.0.1:9/v1/embeddings',
  EMBEDDINGS_MODEL: 'unused',
};

/** Starts `fns serve` and resolves with the URL of its start line. */
async function serve(
  args: string[],
  environment: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], {
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no start line: ${out}`)), 20_000);
    child.once('exit', () => reject(new Error(`exited: ${out}`)));
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
  });
  return { child, url, output: () => out };
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe('fns serve --port and --host take precedence over PORT and HOST', () => {
  it('listens where the flags say', async () => {
    const port = await freePort();
    const { child, url } = await serve(['--port', String(port), '--host', '127.0.0.1'], {
      ...env,
      PORT: '1',
      HOST: '0.0.0.0',
    });
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${url}/v1/account/usage`)).status).toBe(401);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  }, 60_000);
});

describe('fns serve', () => {
  it('serves REST and the stream on one port, and on SIGTERM closes streams with 1001 and exits 0', async () => {
    const { key } = JSON.parse(
      execFileSync(process.execPath, [bin, 'keys', 'create', '--tier', 'pro', '--json'], { env, encoding: 'utf8' }),
    );
    const { child, url, output } = await serve([], env);
    const usage = await fetch(`${url}/v1/account/usage`, { headers: { 'X-API-Key': key } });
    expect(await usage.json()).toMatchObject({ tier: 'pro', rate_limit: 30 });

    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream?api_key=${key}`);
    await once(ws, 'open');
    const closed = once(ws, 'close');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code, reason] = (await closed) as [number, Buffer];
    expect(code).toBe(1001);
    expect(reason.toString()).toBe('Server shutting down');
    const [exitCode] = (await exited) as [number];
    expect(exitCode).toBe(0);
    expect(output()).not.toContain(key);
  }, 60_000);
});

describe("npm start sizes V8's background threads to the machine (--v8-pool-size=0)", () => {
  // Node's default is 4 threads whatever the machine; on 2 CPUs they took the event loop's core while a
  // large feed was stored (docs/operations.md). Linux: the threads are read from /proc.
  it.runIf(existsSync('/proc/self/task'))(
    'the service started by npm start has one fewer than the CPUs (at least one)',
    async () => {
      const child = spawn('npm', ['start', '--silent'], {
        cwd: repoRoot,
        env: { ...env, ADMIN_PORT: undefined },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      // The service's log lines carry its pid (npm runs it as a child).
      const pid = await new Promise<number>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no log line with a pid: ${out}`)), 30_000);
        child.once('exit', () => reject(new Error(`exited: ${out}`)));
        const look = () => {
          const m = /listening on[\s\S]*"pid":(\d+)/.exec(out);
          if (m) {
            clearTimeout(t);
            resolve(Number(m[1]));
          }
        };
        child.stdout!.on('data', look);
        child.stderr!.on('data', look);
      });
      const v8Threads = readdirSync(`/proc/${pid}/task`).filter(
        (t) => readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim() === 'V8Worker',
      ).length;
      expect(v8Threads).toBe(Math.max(1, availableParallelism() - 1));
      process.kill(pid, 'SIGTERM');
      await once(child, 'exit');
    },
    60_000,
  );
});

/**
 * Prism as a child on a private loopback port, serving the contract's examples behind the mock's front; telemetry
 * and CORS off. Its guard (prism-guard.mjs) stops it on close, on this process's exit, and after a SIGKILL of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export interface PrismOptions {
  /** The OpenAPI document Prism serves (generated/openapi.json or openapi.yaml). */
  specPath: string;
  /** Loopback port for Prism; 0 (default) picks a free one. */
  port?: number;
  /** Base environment of the child (e.g. the caller's environment); the telemetry switches are added. */
  env?: Record<string, string | undefined>;
  /** Gets Prism's start and error lines (request logs are dropped). */
  log?: (line: string) => void;
  startTimeoutMs?: number;
}

export interface RunningPrism {
  url: string;
  port: number;
  /** The guard process that runs Prism (it stops Prism when it ends). */
  pid: number;
  stop(): Promise<void>;
}

const TELEMETRY_OFF = { SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' } as const;

const HOST = '127.0.0.1';

function prismEntry(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

/** Prism under its guard, once listening; a spawn error, early exit or timeout (30 s) stops it, throwing its output. */
export async function startPrism(opts: PrismOptions): Promise<RunningPrism> {
  const port = opts.port || (await freeLoopbackPort());
  const { child, exited } = spawnGuarded(opts.specPath, port, childEnv(opts.env));
  const stop = () => stopChild(child, exited);
  try {
    await untilListening(child, opts.startTimeoutMs ?? 30_000, opts.log);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://${HOST}:${port}`, port, pid: child.pid!, stop };
}

function childEnv(base: Record<string, string | undefined> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base ?? {})) if (v !== undefined) env[k] = v;
  Object.assign(env, TELEMETRY_OFF, { NO_COLOR: '1', FORCE_COLOR: '0' });
  return env;
}

/** Prism under its guard on HOST:`port`, and its exit; the guard gets SIGTERM if this process exits first. */
function spawnGuarded(
  specPath: string,
  port: number,
  env: Record<string, string>,
): { child: ChildProcess; exited: Promise<void> } {
  const guard = fileURLToPath(new URL('./prism-guard.mjs', import.meta.url));
  const args = ['mock', specPath, '--host', HOST, '--port', String(port), '--cors=false', '--errors=false'];
  // stdin stays an open pipe: the guard stops Prism when it closes (this process is gone).
  const child: ChildProcess = spawn(process.execPath, [guard, prismEntry(), ...args], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.on('error', () => {});
  // On exit there is no time to wait: SIGTERM now; the guard also stops Prism when its stdin closes.
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  exited.then(() => process.off('exit', killOnExit));
  return { child, exited };
}

/** Stops the guard if it still runs (SIGTERM and stdin closed, SIGKILL after 5 s); resolves once it has exited. */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** Resolves when Prism is listening; rejects on spawn error, early exit or timeout with its last 200 lines. */
function untilListening(child: ChildProcess, timeoutMs: number, log?: (line: string) => void): Promise<void> {
  const output: string[] = [];
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Prism did not start within ${timeoutMs} ms:\n${output.join('\n')}`)),
      timeoutMs,
    );
    const onLine = (raw: string) => {
      const line = stripAnsi(raw).trim();
      if (!line) return;
      output.push(line);
      if (output.length > 200) output.shift();
      if (/Prism is listening on/.test(line)) {
        clearTimeout(timer);
        resolve();
        return;
      }
      // Only Prism's own failures; its per-request logs (and its notes on its own example responses) are dropped.
      if (/\[CLI\]/.test(line) && /\b(error|fatal)\b/.test(line)) log?.(`prism: ${line}`);
    };
    for (const stream of [child.stdout, child.stderr]) eachLine(stream, onLine);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited (${signal ?? `code ${code}`}) before listening:\n${output.join('\n')}`));
    });
  });
}

function eachLine(stream: Readable | null, onLine: (line: string) => void): void {
  let buf = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
}

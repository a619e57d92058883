/**
 * A redis-server of a test file's own, on a free port, that the test may kill, stop and restart (never
 * the machine's shared Redis, which other suites use at the same time). Nothing is persisted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { sleep } from './wait.js';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/** A free TCP port (nothing listens on it once this resolves). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}


export class PrivateRedis {
  private server: ChildProcess | undefined;
  constructor(readonly port: number) {}

  static async onFreePort(): Promise<PrivateRedis> {
    return new PrivateRedis(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, empty) and waits until it answers PING. */
  async start(): Promise<void> {
    this.server = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const probe = new Redis({ port: this.port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => {});
    try {
      for (let i = 0; i < 100; i++) {
        try {
          await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          await sleep(50);
        }
      }
      throw new Error(`redis-server did not start on ${this.port}`);
    } finally {
      probe.disconnect();
    }
  }

  /** SIGSTOP / SIGCONT: a hung server. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.server?.kill(signal);
  }

  async kill(): Promise<void> {
    const s = this.server;
    if (!s || s.exitCode !== null || s.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      s.once('exit', () => resolve());
      s.kill('SIGKILL');
    });
  }
}

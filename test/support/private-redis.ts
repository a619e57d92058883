/**
 * A redis-server of a test file's own, on a free port, that the test may kill, stop and restart (never
 * the machine's shared Redis, which other suites use at the same time). Nothing is persisted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

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

  /** Starts it (again, empty): resolves when the server says it accepts connections, and answers PING. */
  async start(): Promise<void> {
    const server = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      let log = '';
      let ready = false;
      const onExit = (code: number | null) =>
        reject(new Error(`redis-server exited (${code}) before it was ready on ${this.port}:\n${log}`));
      // Its log is read to the end (and dropped once ready) so that a full pipe never blocks the server.
      server.stdout!.on('data', (chunk: Buffer) => {
        if (ready) return;
        log += chunk.toString('utf8');
        if (!log.includes('Ready to accept connections')) return;
        ready = true;
        server.off('exit', onExit);
        resolve();
      });
      server.once('exit', onExit);
    });
    const probe = new Redis({
      port: this.port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    probe.on('error', () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) !== 'PONG') throw new Error(`redis-server on ${this.port} does not answer PING`);
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

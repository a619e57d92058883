/**
 * Expected conditions give one clear line and an exit code, never a stack trace: a missing or unreadable
 * input, a port in use, a DATA_DIR that cannot hold the database, a database another process keeps busy.
 */
import { createServer, type Server } from 'node:net';
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explain } from '../../src/cli/errors.js';
import { expectCleanFailure, fnsBin, fnsWith, tempDataDir, type FnsResult } from './support.js';

const data = tempDataDir('fns-fail-');
const { fns } = data;
const asRoot = process.getuid?.() === 0; // root reads and writes through any permission bits

afterAll(() => {
  chmodSync(data.dir, 0o700);
  data.remove();
});

describe('an unreadable ingest input', () => {
  it('a missing file: exit 1, the file named', async () => {
    const missing = join(data.dir, 'missing.ndjson');
    expectCleanFailure(await fns('articles', 'ingest', missing), 1, `${missing}: no such file or directory`);
  });
  it('a directory: exit 1', async () => {
    expectCleanFailure(await fns('articles', 'ingest', data.dir), 1, `${data.dir}: is a directory`);
  });
  it.skipIf(asRoot)('a file without read permission: exit 1', async () => {
    const locked = join(data.dir, 'locked.ndjson');
    writeFileSync(locked, '{"content":"x"}\n');
    chmodSync(locked, 0o000);
    expectCleanFailure(await fns('articles', 'ingest', locked), 1, `${locked}: permission denied`);
  });
  it('permission denied, as the message reads (also checked as a real process when not root)', () => {
    const e = Object.assign(new Error('EACCES: permission denied'), {
      code: 'EACCES',
      syscall: 'open',
      path: '/srv/in.ndjson',
    });
    expect(explain(e)).toEqual({ message: '/srv/in.ndjson: permission denied', exitCode: 1 });
  });
});

describe('an ingest input whose read fails (an I/O error): one line, exit 1, no stack trace', () => {
  it('as the message reads', () => {
    const e = Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO', syscall: 'read', errno: -5 });
    expect(explain(e)).toEqual({ message: 'the input could not be read (EIO: i/o error, read)', exitCode: 1 });
  });
  it.skipIf(process.platform !== 'linux')('a real process reading /proc/self/mem (EIO at its first byte)', async () => {
    expectCleanFailure(await fns('articles', 'ingest', '/proc/self/mem'), 1, 'the input could not be read (EIO');
  });
});

describe('a directory on standard input is refused as a directory given by name is', () => {
  it.skipIf(process.platform !== 'linux')(
    'fns articles ingest - < dir: exit 1, nothing read (it was "ingested 0 of 0", exit 0)',
    async () => {
      const fd = openSync(data.dir, 'r');
      try {
        const r = await new Promise<FnsResult>((resolve, reject) => {
          const child = spawn(process.execPath, [fnsBin, 'articles', 'ingest', '-'], {
            env: { ...process.env, DATA_DIR: data.dir },
            stdio: [fd, 'pipe', 'pipe'],
          });
          let stdout = '';
          let stderr = '';
          child.stdout!.setEncoding('utf8').on('data', (d) => (stdout += d));
          child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        });
        expectCleanFailure(r, 1, 'standard input is a directory');
      } finally {
        closeSync(fd);
      }
    },
  );
});

describe('a DATA_DIR that cannot hold the database', () => {
  it('DATA_DIR is a file: exit 1, the path named', async () => {
    const file = join(data.dir, 'not-a-dir');
    writeFileSync(file, '');
    expectCleanFailure(await fnsWith({ dataDir: file }, 'keys', 'list'), 1, /^fns: .*not-a-dir.*: not a directory/m);
  });
  it.skipIf(asRoot)('DATA_DIR in a directory without write permission: exit 1', async () => {
    const parent = join(data.dir, 'readonly');
    mkdirSync(parent);
    chmodSync(parent, 0o500);
    expectCleanFailure(await fnsWith({ dataDir: join(parent, 'data') }, 'keys', 'list'), 1, 'permission denied');
  });
});

/** A loopback port another listener holds while the enclosing describe's tests run. */
function takenPort(): { readonly port: number } {
  let blocker: Server;
  let port = 0;
  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    port = (blocker.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  return {
    get port() {
      return port;
    },
  };
}

describe('a port in use (serve, demo): exit 1, "port N is in use; set PORT or --port"', () => {
  const taken = takenPort();

  it('fns serve --port', async () => {
    expectCleanFailure(
      await fns('serve', '--port', String(taken.port), '--host', '127.0.0.1'),
      1,
      `port ${taken.port} is in use; set PORT or --port`,
    );
  });
  it('fns serve with PORT', async () => {
    const r = await fnsWith({ dataDir: data.dir, env: { PORT: String(taken.port), HOST: '127.0.0.1' } }, 'serve');
    expectCleanFailure(r, 1, `port ${taken.port} is in use`);
  });
  it('fns demo --port', async () => {
    const r = await fnsWith({ dataDir: data.dir, env: { HOST: '127.0.0.1' } }, 'demo', '--port', String(taken.port));
    expectCleanFailure(r, 1, `port ${taken.port} is in use; set PORT or --port`);
  }, 60_000);
});

describe('a port in use by the admin listener: the message names ADMIN_PORT, not PORT', () => {
  const taken = takenPort();

  it('fns serve with ADMIN_PORT taken: exit 1, "the admin listener: port N is in use; set ADMIN_PORT"', async () => {
    const r = await fnsWith(
      { dataDir: data.dir, env: { PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: String(taken.port) } },
      'serve',
    );
    expectCleanFailure(r, 1, /^fns: the admin listener: port \d+ is in use; set ADMIN_PORT$/m);
    expect(r.stderr).toContain(`port ${taken.port} is in use`);
    expect(r.stderr).not.toContain('set PORT');
  }, 60_000);

  it('each listener names its own settings for a port in use, a port not allowed and an address not of this machine', async () => {
    const { ADMIN_LISTENER, PUBLIC_LISTENER, fromListener } = await import('../../src/server/listeners.js');
    const listenError = (code: string) =>
      Object.assign(new Error(code), { code, syscall: 'listen', port: 80, address: '10.9.9.9' });
    expect(explain(fromListener(listenError('EADDRINUSE'), ADMIN_LISTENER))?.message).toBe(
      'the admin listener: port 80 is in use; set ADMIN_PORT',
    );
    expect(explain(fromListener(listenError('EACCES'), ADMIN_LISTENER))?.message).toBe(
      'the admin listener: not allowed to listen on port 80 (ports below 1024 need privileges); set ADMIN_PORT',
    );
    expect(explain(fromListener(listenError('EADDRNOTAVAIL'), ADMIN_LISTENER))?.message).toBe(
      'the admin listener: cannot listen on 10.9.9.9: not an address of this machine; set ADMIN_HOST',
    );
    const unknownHost = Object.assign(new Error('getaddrinfo ENOTFOUND'), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname: 'admin.invalid',
    });
    expect(explain(fromListener(unknownHost, ADMIN_LISTENER))?.message).toBe(
      'the admin listener: unknown host admin.invalid; set ADMIN_HOST',
    );
    expect(explain(fromListener(listenError('EADDRINUSE'), PUBLIC_LISTENER))?.message).toBe(
      'port 80 is in use; set PORT or --port',
    );
  });
});

describe('a database another process keeps locked', () => {
  /** Holds the write lock of DATA_DIR's database for `ms` from this process. */
  async function holdWriteLock(ms: number): Promise<() => void> {
    const db = new Database(join(data.dir, 'fns.sqlite'));
    db.exec('BEGIN IMMEDIATE');
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const timer = setTimeout(release, ms);
    void done.then(() => {
      clearTimeout(timer);
      db.exec('ROLLBACK');
      db.close();
    });
    return release;
  }
  beforeAll(async () => {
    expect((await fns('keys', 'list')).code).toBe(0); // the database exists
  });

  it('a writer waits its turn: the lock is released within the wait and the command succeeds', async () => {
    await holdWriteLock(1000);
    const r = await fns('keys', 'create', '--tier', 'pro', '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
  it('a lock held past the 5 s wait: exit 1, "the database is busy ... try again", and nothing is stored', async () => {
    const release = await holdWriteLock(30_000);
    const before = JSON.parse((await fns('keys', 'list', '--json')).stdout).keys.length;
    const r = await fns('keys', 'create', '--tier', 'pro');
    release();
    expectCleanFailure(r, 1, /^fns: the database is busy: another process kept it locked .*; try again$/m);
    expect(JSON.parse((await fns('keys', 'list', '--json')).stdout).keys.length).toBe(before);
  }, 30_000);
});

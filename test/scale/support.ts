/**
 * Real `fns` processes on the machine's PostgreSQL and Redis, in a fresh schema and key prefix per run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTrigramEmbeddings, TRIGRAM_MODEL } from '../../scripts/lib/trigram-embeddings.js';
import { repoRoot } from '../support/specs.js';
import { PG_URL, REDIS_URL, runId } from './engines.js';
import type { Closed, TestClient } from '../stream/support.js';

const BIN = join(repoRoot, 'bin', 'fns.mjs');

export interface Deployment {
  env: NodeJS.ProcessEnv;
  schema: string;
  /** Runs one `fns` command to completion. */
  fns(args: string[], input?: string): { status: number | null; stdout: string; stderr: string };
  /** Starts `fns serve` on a free port; resolves with its URL once it listens. */
  serve(extraEnv?: NodeJS.ProcessEnv): Promise<Instance>;
  close(): Promise<void>;
}

export interface Instance {
  url: string;
  port: number;
  child: ChildProcess;
  /** The admin listener's URL when the instance was started with ADMIN_PORT. */
  adminUrl?: string;
  output(): string;
  /** Resolves when the instance's output matches `re` (rejects after `timeoutMs`). */
  waitOutput(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function deployment(opts: { redisUrl?: string } = {}): Promise<Deployment> {
  const schema = runId('fns_test');
  const dataDir = mkdtempSync(join(tmpdir(), 'fns-scale-'));
  const embeddings = await startTrigramEmbeddings();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    DATABASE_URL: PG_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL: opts.redisUrl ?? REDIS_URL,
    REDIS_PREFIX: schema,
    EMBEDDINGS_URL: embeddings.url,
    EMBEDDINGS_MODEL: TRIGRAM_MODEL,
    HOST: '127.0.0.1',
    // bench:scale opens its 1,000 stream clients from one loopback address: the per-address cap
    // (MAX_CONNECTIONS_PER_ADDRESS, 256 by default) is for partners on the internet, not measured here.
    MAX_CONNECTIONS_PER_ADDRESS: '0',
  };
  const instances: Instance[] = [];
  const d: Deployment = {
    env,
    schema,
    fns(args, input) {
      const r = spawnSync(process.execPath, [BIN, ...args], { env, input, encoding: 'utf8', timeout: 60_000 });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    async serve(extraEnv = {}) {
      const child = spawn(process.execPath, [BIN, 'serve'], {
        env: { ...env, PORT: '0', ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.on('data', (c) => (out += c));
      child.stderr!.on('data', (c) => (out += c));
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`fns serve did not start:\n${out}`)), 30_000);
        const check = () => {
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        child.stdout!.on('data', check);
        child.stderr!.on('data', check);
        child.on('exit', (code) => reject(new Error(`fns serve exited with ${code}:\n${out}`)));
      });
      const exited = new Promise<void>((r) => child.on('exit', () => r()));
      // Checked on each chunk of output (after `out` has it: its listener was added first).
      const waitOutput = (re: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> =>
        new Promise((resolve, reject) => {
          const done = () => {
            clearTimeout(timer);
            child.stdout!.off('data', check);
            child.stderr!.off('data', check);
          };
          const check = () => {
            const m = re.exec(out);
            if (!m) return;
            done();
            resolve(m);
          };
          const timer = setTimeout(() => {
            done();
            reject(new Error(`no ${re} in the output of fns serve within ${timeoutMs} ms:\n${out}`));
          }, timeoutMs);
          child.stdout!.on('data', check);
          child.stderr!.on('data', check);
          check();
        });
      // The admin line follows the listening line (src/cli/main.ts).
      const adminUrl =
        extraEnv.ADMIN_PORT !== undefined ? (await waitOutput(/admin listener on (http:\/\/\S+)/))[1]! : undefined;
      const instance: Instance = {
        url,
        port: Number(new URL(url).port),
        child,
        ...(adminUrl ? { adminUrl } : {}),
        output: () => out,
        waitOutput,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      };
      instances.push(instance);
      return instance;
    },
    async close() {
      await Promise.all(instances.map((i) => i.stop('SIGKILL')));
      embeddings.close();
      rmSync(dataDir, { recursive: true, force: true });
      // The run's schema and keys go with it.
      spawnSync('psql', [PG_URL, '-q', '-c', `DROP SCHEMA IF EXISTS "${schema}" CASCADE`], { encoding: 'utf8' });
      spawnSync('redis-cli', ['-u', env.REDIS_URL!, '--scan', '--pattern', `${schema}*`], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .forEach((k) => spawnSync('redis-cli', ['-u', env.REDIS_URL!, 'DEL', k]));
    },
  };
  return d;
}

/** `fns keys create --tier <tier> --json` on the deployment. */
export function createKey(d: Deployment, tier: string): { key: string; key_id: string; account_id: string } {
  const r = d.fns(['keys', 'create', '--tier', tier, '--json']);
  if (r.status !== 0) throw new Error(`keys create: ${r.status} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * How a new stream connection of `keyId` to `instance` ends up: 'open' once the instance logs its
 * admission (`stream open` with the key's id), or its close code and reason when it is refused; neither
 * within `ms` fails.
 */
export function streamOutcome(instance: Instance, c: TestClient, keyId: string, ms = 5000): Promise<'open' | Closed> {
  const admitted = instance
    // The id as a whole JSON value: ids are base64url, so `-` may end one (where `\b` never matches).
    .waitOutput(new RegExp(`^(?=[^\\n]*stream open)[^\\n]*"key_id":"${escapeRegExp(keyId)}"`, 'm'), ms)
    .then(() => 'open' as const);
  admitted.catch(() => {}); // when the close comes first
  return Promise.race([c.closed, admitted]);
}

/**
 * Reaching the machine's PostgreSQL and Redis for the scale-out suites. When an engine is not reachable
 * the suites skip LOUDLY; with FNS_REQUIRE_ENGINES=1 (set by .ci/run) a skip is a failure instead.
 */
import { createConnection } from 'node:net';

export const PG_URL = process.env.PG_TEST_URL ?? 'postgres://127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
export const REQUIRE_ENGINES = process.env.FNS_REQUIRE_ENGINES === '1';

function reachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: u.hostname, port: Number(u.port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('connect', () => done(true));
    socket.on('error', () => done(false));
  });
}

/** Which engines are missing; throws when they must be there (CI). */
export async function missingEngines(suite: string, tests: number): Promise<string[]> {
  const missing: string[] = [];
  if (!(await reachable(PG_URL))) missing.push(`PostgreSQL not reachable at ${PG_URL}`);
  if (!(await reachable(REDIS_URL))) missing.push(`Redis not reachable at ${REDIS_URL}`);
  if (missing.length === 0) return missing;
  const line = `skipped ${tests} tests of ${suite}: ${missing.join('; ')}`;
  if (REQUIRE_ENGINES) throw new Error(`${line} (FNS_REQUIRE_ENGINES=1: the engines must be reachable)`);
  console.warn(`\n${'!'.repeat(100)}\n!!! ${line}\n${'!'.repeat(100)}\n`);
  return missing;
}

/** A name unique to this run: a PostgreSQL schema, a Redis key prefix. */
export function runId(what: string): string {
  return `${what}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
}

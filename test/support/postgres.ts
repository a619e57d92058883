/**
 * PostgreSQL for tests: PG_TEST_URL (default the machine's 127.0.0.1:5432/test), a fresh schema per
 * use (fns_test_<random>) dropped afterwards, and the loud skip / FNS_REQUIRE_ENGINES rule.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { it } from 'vitest';
import { connectionString } from '../../src/store/postgres/db.js';
import { openPostgresStore, type OpenPostgresOptions, type PostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/ports/index.js';

export const PG_TEST_URL = process.env.PG_TEST_URL ?? 'postgres://127.0.0.1:5432/test';
const REQUIRE = process.env.FNS_REQUIRE_ENGINES === '1';

export function freshSchema(): string {
  return `fns_test_${randomBytes(6).toString('hex')}`;
}

export function adminClient(): pg.Client {
  const c = new pg.Client({ connectionString: connectionString(PG_TEST_URL), connectionTimeoutMillis: 3000 });
  c.on('error', () => {});
  return c;
}

export async function sql<R extends object = Record<string, unknown>>(
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const c = adminClient();
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

export async function dropSchemas(schemas: string[]): Promise<void> {
  if (schemas.length === 0) return;
  await sql(schemas.map((s) => `DROP SCHEMA IF EXISTS ${s} CASCADE`).join('; '));
}

/** Whether PostgreSQL answers at PG_TEST_URL (within 3 s). */
export async function pgReachable(): Promise<boolean> {
  try {
    await sql('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/**
 * Call after registering the suite with `skip: !reachable`: prints the loud skip line, or, when
 * FNS_REQUIRE_ENGINES=1, registers a failing test instead of skipping quietly.
 */
export function reportUnreachable(reachable: boolean, skipped: number): void {
  if (reachable) return;
  const line = `skipped ${skipped} tests: PostgreSQL not reachable at ${PG_TEST_URL}`;
  if (REQUIRE) {
    it('PostgreSQL is reachable (FNS_REQUIRE_ENGINES=1)', () => {
      throw new Error(`${line} (FNS_REQUIRE_ENGINES=1 makes this a failure)`);
    });
  }
  process.stderr.write(`\n\x1b[1;33m${'!'.repeat(8)} ${line} ${'!'.repeat(8)}\x1b[0m\n\n`);
}

/**
 * Stores for the store suites: each `open` on a fresh schema, each `peer` a second pool on a store's
 * schema (another instance's view); `cleanup` drops every schema opened so far.
 */
export function pgTestStores(): {
  open(extra?: Omit<OpenPostgresOptions, 'schema'>): Promise<PostgresStore>;
  peer(store: Store, extra?: Omit<OpenPostgresOptions, 'schema'>): Promise<PostgresStore>;
  cleanup(): Promise<void>;
} {
  const schemas: string[] = [];
  return {
    open(extra = {}) {
      const schema = freshSchema();
      schemas.push(schema);
      return openPostgresStore(PG_TEST_URL, { schema, poolSize: 4, ...extra });
    },
    peer(store, extra = {}) {
      return openPostgresStore(PG_TEST_URL, { schema: (store as PostgresStore).schema, poolSize: 4, ...extra });
    },
    cleanup: () => dropSchemas(schemas.splice(0)),
  };
}

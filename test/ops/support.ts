/** The composed service with its admin listener, logs captured line by line, keys made beforehand. */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKey } from '../../src/cli/operator.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/ops/logger.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { livePrefix, startService, type RunningService } from '../../src/server/index.js';
import { sqliteFile } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { TrigramEmbedder } from '../support/service.js';

export type Tier = 'starter' | 'pro' | 'max' | 'free';

export interface OpsService {
  svc: RunningService;
  port: number;
  /** Empty when started with `admin: false`. */
  adminUrl: string;
  embedder: TrigramEmbedder;
  /** Every line the structured logger wrote (JSON), in order. */
  lines: string[];
  /** The same, parsed. */
  records(): Record<string, any>[];
  keys: Record<string, { key: string; key_id: string; account_id: string }[]>;
  close(): Promise<void>;
}

export async function startOps(
  opts: { keys?: Partial<Record<Tier, number>>; admin?: boolean } = {},
): Promise<OpsService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fns-ops-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    ...(opts.admin === false ? {} : { ADMIN_PORT: '0' }),
  });
  const store = new SqliteStore(sqliteFile(config));
  const keys: OpsService['keys'] = {};
  for (const [tier, n] of Object.entries(opts.keys ?? {})) {
    keys[tier] = [];
    for (let i = 0; i < n; i++)
      keys[tier].push(
        await createKey(store.accounts, { tier: tier as Tier, livePrefix: livePrefix(config), now: Date.now() }),
      );
  }
  store.close();
  const lines: string[] = [];
  const logger = createLogger({ destination: { write: (l) => void lines.push(l) }, pretty: false });
  const embedder = new TrigramEmbedder();
  const svc = await startService(config, { logger, metrics: createMetrics(), embedder });
  return {
    svc,
    port: Number(new URL(svc.url).port),
    adminUrl: svc.adminUrl ?? '',
    embedder,
    lines,
    records: () => lines.map((l) => JSON.parse(l)),
    keys,
    async close() {
      await svc.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A GET with any header values (even ones fetch would refuse), over a fresh connection. */
export function rawGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

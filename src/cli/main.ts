/**
 * `fns`: the operator command line (DESIGN.md §3). Every command that prints data accepts --json.
 * Changes go straight to the store, which a running service reads on every request.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { databaseFile, livePrefix, startService } from '../server/index.js';
import { SqliteStore } from '../store/sqlite.js';
import { cancel, createKey, ingest, OperatorError, setKeyActive, setTier } from './operator.js';
import { runDemo } from './demo.js';

const USAGE = `fns: operate the Financial News Service

  fns serve                                       run the service (PORT, default 8080)
  fns demo [--port N]                             a ready-to-try instance: sample articles, one key per tier
  fns keys create --tier <starter|pro|max|free> [--account <id>]
  fns keys deactivate <key_id>
  fns keys activate <key_id>
  fns accounts set-tier <account_id> <starter|pro|max|free>
  fns accounts cancel <account_id>                to \`expired\` (7-day grace), then \`free\`
  fns articles ingest <file.ndjson | ->           NDJSON, one article per line

Options: --json (machine-readable output). Configuration: environment variables (README).`;

function print(json: boolean, data: unknown, human: string): void {
  console.log(json ? JSON.stringify(data) : human);
}

async function withStore<T>(config: Config, fn: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore(databaseFile(config));
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      tier: { type: 'string' },
      account: { type: 'string' },
      port: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [group, action, ...rest] = positionals;
  if (values.help || !group) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const config = loadConfig();
  const now = Date.now();
  const json = values.json!;

  switch (`${group} ${action ?? ''}`.trim()) {
    case 'serve': {
      const svc = await startService(config);
      console.log(`fns: listening on ${svc.url} (data: ${databaseFile(config)})`);
      const stop = async () => {
        await svc.close();
        process.exit(0);
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      return -1;
    }
    case 'demo':
      await runDemo(config, { json, ...(values.port ? { port: values.port } : {}) });
      return -1;
    case 'keys create': {
      const out = await withStore(config, (s) =>
        createKey(s, {
          ...(values.tier !== undefined ? { tier: values.tier } : {}),
          ...(values.account !== undefined ? { accountId: values.account } : {}),
          livePrefix: livePrefix(config),
          now,
        }),
      );
      print(json, out, `key:     ${out.key}\nkey_id:  ${out.key_id}\naccount: ${out.account_id}\n(the key is shown only this once; store it now)`);
      return 0;
    }
    case 'keys deactivate':
    case 'keys activate': {
      const out = await withStore(config, (s) => setKeyActive(s, rest[0], action === 'activate'));
      print(json, out, `${out.key_id}: ${out.active ? 'active' : 'inactive'}`);
      return 0;
    }
    case 'accounts set-tier': {
      const out = await withStore(config, (s) => setTier(s, rest[0], rest[1], now));
      print(json, out, `${out.account_id}: ${out.tier}, period ends ${out.period_end ?? '-'}`);
      return 0;
    }
    case 'accounts cancel': {
      const out = await withStore(config, (s) => cancel(s, rest[0], now));
      print(json, out, `${out.account_id}: cancelled at ${out.cancelled_at} (expired for 7 days, then free)`);
      return 0;
    }
    case 'articles ingest': {
      const file = rest[0];
      if (!file) throw new OperatorError('a file is required (or - for standard input)');
      const text = readFileSync(file === '-' ? 0 : file, 'utf8');
      // Received when committed: the store reads the clock inside the write transaction.
      const out = await withStore(config, (s) => ingest(s, text, Date.now));
      for (const e of out.errors) console.error(`line ${e.line}: ${e.error} (skipped)`);
      print(json, out, `ingested ${out.ingested} of ${out.lines} article(s)${out.errors.length ? `, ${out.errors.length} skipped` : ''}`);
      return out.errors.length > 0 && out.ingested === 0 ? 1 : 0;
    }
    default:
      console.error(`fns: unknown command "${positionals.join(' ')}"\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    if (err instanceof OperatorError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`fns: ${(err as Error).message}`);
      process.exit(2);
    }
    console.error(err);
    process.exit(1);
  },
);

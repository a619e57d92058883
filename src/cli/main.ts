/**
 * `fns`, the operator command line (docs/operations.md). Changes go straight to the store, which a running service
 * reads on every request. Output is complete on a pipe: the process exits only once stdout and stderr are flushed.
 */
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { staleGenerated } from '../contract/freshness.js';
import { livePrefix } from '../auth/prefix.js';
import type { SourceStore, Store, StoreTx } from '../store/ports/index.js';
import { parseCommandLine, parseHost, parsePort, type CommandSpec, type OptionName } from './commands.js';
import { isStoreBusy } from '../store/ports/errors.js';
import { CliError, EXIT, explain, type ErrorContext } from './errors.js';
import { openInput, readLines } from './input.js';
import {
  cancel,
  createAccount,
  createKey,
  ingest,
  IngestStopped,
  listKeys,
  setKeyActive,
  setTier,
  showAccount,
  showArticle,
  type IngestReport,
} from './operator.js';
import { Progress } from './progress.js';
import { demoHint } from './demo-data.js';
import { printable, printableJson, printableLines } from '../domain/printable.js';
import { basename } from 'node:path';

/** What the current command works on, to name it in an error message. */
const context: ErrorContext = {};

/**
 * Every line goes through `printableLines` (JSON through `printableJson`): no control character reaches the terminal.
 */
function out(text: string): void {
  process.stdout.write(`${printableLines(text)}\n`);
}
function err(text: string): void {
  process.stderr.write(`${printableLines(text)}\n`);
}
function print(json: boolean, data: unknown, human: string): void {
  out(json ? printableJson(data) : human);
}

/** The store factory, and with it the SQLite driver: loaded by the commands that open a store, not by `fns --help`. */
const storeFactory = () => import('../store/index.js');

/** The store of this deployment: the SQLite file under DATA_DIR, or PostgreSQL when DATABASE_URL is set. */
async function cliStore(config: Config): Promise<Store> {
  return (await storeFactory()).openStore(config, { role: 'cli', postgres: { schema: config.databaseSchema } });
}

async function whereData(config: Config): Promise<string> {
  return config.databaseUrl ? `PostgreSQL schema ${config.databaseSchema}` : (await storeFactory()).sqliteFile(config);
}

/**
 * Runs `fn` on the store; a write in one transaction (all of it stored or nothing), waiting for the write lock first.
 */
async function withStore<T>(config: Config, fn: (store: StoreTx) => Promise<T>, opts: { write: boolean }): Promise<T> {
  const store = await cliStore(config);
  try {
    return opts.write ? await store.transaction(fn) : await fn(store);
  } finally {
    await store.close();
  }
}

/** A data command about to create an empty SQLite store beside a demo's says where the demo's data is. */
async function noteDemo(config: Config, command: string): Promise<void> {
  if (config.databaseUrl) return;
  const file = (await storeFactory()).sqliteFile(config);
  const hint = demoHint(config.dataDir, file, basename(file), command);
  if (hint) err(hint);
}

/** The listener settings of serve and demo: --port / --host over PORT / HOST. */
function listenConfig(config: Config, options: Partial<Record<OptionName, string | boolean>>): Config {
  const cfg = { ...config };
  if (typeof options.port === 'string') cfg.port = parsePort(options.port);
  if (typeof options.host === 'string') cfg.host = parseHost(options.host);
  context.port = cfg.port;
  context.host = cfg.host;
  return cfg;
}

const BUSY_ATTEMPTS = 6;

/** Each chunk of an ingest waits its turn: on a busy database it tries again, BUSY_ATTEMPTS times. */
function patientIngest(store: SourceStore, progress: Progress): Pick<SourceStore, 'ingestItems'> {
  return {
    async ingestItems(items, at) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await store.ingestItems(items, at);
        } catch (e) {
          if (!isStoreBusy(e) || attempt >= BUSY_ATTEMPTS) throw e;
          progress.note('fns: the database is busy (another process is writing); still waiting');
        }
      }
    },
  };
}

function ingestSummary(r: IngestReport): string {
  const dup = r.duplicates.length ? `, ${r.duplicates.length} already stored (duplicate)` : '';
  return `ingested ${r.ingested} of ${r.lines} article(s)${dup}${r.errors.length ? `, ${r.errors.length} skipped` : ''}`;
}

async function ingestCommand(config: Config, file: string, json: boolean): Promise<number> {
  const input = await openInput(file);
  if (file === '-' && process.stdin.isTTY) err('fns: reading NDJSON from standard input; end it with Ctrl+D');
  const store = await cliStore(config);
  const progress = new Progress(process.stderr);
  const interrupt = new AbortController();
  const onSigint = () => {
    interrupt.abort(new CliError('interrupted'));
    input.destroy();
  };
  process.once('SIGINT', onSigint);
  try {
    // Received when committed: the store reads the clock inside each write transaction.
    const report = await ingest(patientIngest(store.sources, progress), readLines(input), Date.now, {
      onSkip: (e) => progress.note(`line ${e.line}: ${e.error} (skipped)`),
      onProgress: (r) => progress.update(r),
      signal: interrupt.signal,
    });
    progress.clear();
    print(json, report, ingestSummary(report));
    if (report.errors.length === 0) return EXIT.ok;
    // A duplicate line is done (its article is stored): only skipped lines make an ingest partial.
    return report.ingested + report.duplicates.length > 0 ? EXIT.partial : EXIT.failed;
  } catch (e) {
    progress.clear();
    if (!(e instanceof IngestStopped)) throw e;
    const reason = interrupt.signal.aborted ? interrupt.signal.reason : e.reason;
    // Nothing settled: only the reason matters (e.g. the input is a directory).
    if (e.doneThroughLine === 0) throw reason;
    print(json, { ...e.report, stopped_after_line: e.doneThroughLine }, ingestSummary(e.report));
    const why = explain(reason, context)?.message ?? (reason as Error)?.stack ?? String(reason);
    err(`fns: stopped after line ${e.doneThroughLine}: ${why}`);
    err(
      `fns: lines 1-${e.doneThroughLine} are done (stored or skipped) and nothing after them was stored: resume from line ${e.doneThroughLine + 1}`,
    );
    return e.report.ingested + e.report.duplicates.length > 0 ? EXIT.partial : EXIT.failed;
  } finally {
    process.off('SIGINT', onSigint);
    await store.close();
    input.destroy();
  }
}

interface CommandRun {
  command: CommandSpec;
  args: string[];
  options: Partial<Record<OptionName, string | boolean>>;
  json: boolean;
  str: (name: OptionName) => string | undefined;
  config: Config;
  now: number;
}

const read = { write: false };
const write = { write: true };

async function serveCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, options } = run;
  const cfg = listenConfig(config, options);
  // Loaded only by the commands that run the service: the data commands start without it.
  const { startService } = await import('../server/index.js');
  const svc = await startService(cfg);
  out(`fns: listening on ${svc.url} (data: ${await whereData(cfg)})`);
  if (svc.adminUrl) out(`fns: admin listener on ${svc.adminUrl}`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await svc.close();
  return EXIT.ok;
}

async function demoCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, options, json } = run;
  await (await import('./demo.js')).runDemo(listenConfig(config, options), { json });
  return 'running';
}

async function accountsCreateCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, json, str, now } = run;
  const acct = await withStore(config, (s) => createAccount(s.accounts, { tier: str('tier'), now }), write);
  print(
    json,
    acct,
    `account: ${acct.account_id}\ntier:    ${acct.tier}${acct.period_end ? `, period ends ${acct.period_end}` : ''}\n(add a key: fns keys create --account ${acct.account_id})`,
  );
  return EXIT.ok;
}

async function accountsShowCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json, now } = run;
  const a = await withStore(config, (s) => showAccount(s.accounts, args[0]!, now), read);
  const tier = a.effective_tier === a.tier ? a.tier : `${a.tier} (in force now: ${a.effective_tier})`;
  const keys = a.keys.map(
    (k) => `  ${k.key_id}  ${(k.active ? 'active' : 'inactive').padEnd(8)}  created ${k.created_at}`,
  );
  print(
    json,
    a,
    [
      `account:   ${a.account_id}`,
      `tier:      ${tier}`,
      `period:    ${a.period_end ? `ends ${a.period_end}` : '-'}`,
      `cancelled: ${a.cancelled_at ?? 'no'}`,
      `keys:      ${a.keys.length}`,
      ...keys,
    ].join('\n'),
  );
  return EXIT.ok;
}

async function accountsSetTierCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json, now } = run;
  const a = await withStore(config, (s) => setTier(s.accounts, args[0]!, args[1], now), write);
  print(json, a, `${a.account_id}: ${a.tier}, period ends ${a.period_end ?? '-'}`);
  return EXIT.ok;
}

async function accountsCancelCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json, now } = run;
  const a = await withStore(config, (s) => cancel(s.accounts, args[0]!, now), write);
  print(json, a, `${a.account_id}: cancelled at ${a.cancelled_at} (expired for 7 days, then free)`);
  return EXIT.ok;
}

async function keysCreateCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, json, str, now } = run;
  const k = await withStore(
    config,
    (s) => createKey(s.accounts, { tier: str('tier'), accountId: str('account'), livePrefix: livePrefix(config), now }),
    write,
  );
  print(
    json,
    k,
    `key:     ${k.key}\nkey_id:  ${k.key_id}\naccount: ${k.account_id}\n(the key is shown only this once; store it now)`,
  );
  return EXIT.ok;
}

async function keysListCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, json, str } = run;
  const account = str('account');
  const list = await withStore(config, (s) => listKeys(s.accounts, account), read);
  const rows = list.keys.map(
    (k) => `${k.key_id}  ${k.account_id}  ${(k.active ? 'active' : 'inactive').padEnd(8)}  ${k.created_at}`,
  );
  const none = account
    ? `account ${account} has no keys (fns keys create --account ${account} adds one)`
    : 'no keys yet (fns keys create --tier <tier> makes one)';
  print(json, list, rows.length ? rows.join('\n') : none);
  return EXIT.ok;
}

async function keysSetActiveCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json, command } = run;
  const k = await withStore(config, (s) => setKeyActive(s.accounts, args[0]!, command.name === 'keys activate'), write);
  print(json, k, `${k.key_id}: ${k.active ? 'active' : 'inactive'}`);
  return EXIT.ok;
}

async function articlesIngestCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json } = run;
  await noteDemo(config, 'articles ingest');
  return ingestCommand(config, args[0]!, json);
}

async function articlesShowCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json } = run;
  const a = await withStore(config, (s) => showArticle(s, args[0]!), read);
  // Pushed, ingested or polled text, each field on its line: escaped (domain/printable.ts).
  const p = (v: string | null | undefined) => (v == null ? '-' : printable(v));
  const carriers = a.carriers.map((c) => `  ${p(c.source)}  ${p(c.at)}  ${c.reason ?? 'first'}  ${p(c.url)}`);
  const items = a.items.map(
    (i) => `  ${p(i.source)}  ${p(i.external_id)}  ${p(i.seen_at)}  ${i.reason ?? 'stored'}  ${p(i.url)}`,
  );
  print(
    json,
    a,
    [
      `article:      ${a.id}`,
      `content:      ${p(a.content)}`,
      `source:       ${p(a.source)}`,
      `url:          ${p(a.url)}`,
      `urgency:      ${a.urgency}`,
      `published_at: ${p(a.published_at)}`,
      `received_at:  ${a.received_at}`,
      `carriers:     ${a.carriers.length}${a.carriers.length ? ' (source, at, reason, url)' : ''}`,
      ...carriers,
      `items:        ${a.items.length}${a.items.length ? ' (source, id at the source, last seen, reason, canonical url)' : ''}`,
      ...items,
    ].join('\n'),
  );
  return EXIT.ok;
}

async function tickersLookupCommand(run: CommandRun): Promise<number | 'running'> {
  const { args, json } = run;
  // Loaded by this command only: the directory and the sentiment model are not needed to start the others.
  const { articleMentions, enrich, explainMentions, tickerRelevance } = await import('../enrich/index.js');
  const text = args[0]!;
  const e = enrich(text);
  const candidates = explainMentions(text);
  const roles = tickerRelevance(text, articleMentions(text));
  const p = (v: string) => printable(v);
  print(
    json,
    {
      text,
      sentiment: e.sentiment,
      tickers: e.tickers.map((t) => ({ ...t, role: roles.get(t.ticker)?.role ?? null })),
      candidates,
    },
    [
      `text:       ${p(text)}`,
      `sentiment:  ${e.sentiment}`,
      `tickers:    ${e.tickers.length ? e.tickers.map((t) => `${t.ticker} ${t.sentiment} ${t.relevance} (${roles.get(t.ticker)?.role ?? 'given'})`).join(', ') : '-'}`,
      `candidates: ${candidates.length}${candidates.length ? ' (as written, symbol, by, kept or refused: rule)' : ''}`,
      ...candidates.map(
        (c) =>
          `  ${p(c.text)}  ${c.ticker}  ${c.via}${c.alias ? ` "${p(c.alias)}"` : ''}  ${c.kept ? 'kept' : 'refused'}: ${p(c.rule)}`,
      ),
    ].join('\n'),
  );
  return EXIT.ok;
}

async function migrateCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, json } = run;
  // PostgreSQL applies what is missing under a lock; SQLite applies them when the file is opened.
  if (config.databaseUrl) {
    const { LATEST_VERSION, migrate } = await import('../store/postgres/index.js');
    const applied = await migrate(config.databaseUrl, config.databaseSchema);
    print(
      json,
      { engine: 'postgres', schema: config.databaseSchema, applied, version: LATEST_VERSION },
      applied.length
        ? `applied migration(s) ${applied.join(', ')}; schema ${config.databaseSchema} is at version ${LATEST_VERSION}`
        : `schema ${config.databaseSchema} is up to date (version ${LATEST_VERSION})`,
    );
  } else {
    await (await cliStore(config)).close();
    const file = (await storeFactory()).sqliteFile(config);
    print(json, { engine: 'sqlite', file }, `${file} is up to date`);
  }
  return EXIT.ok;
}

async function sourcesCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json, str, command } = run;
  const { runSourcesCommand } = await import('./sources.js');
  const { openStore } = await import('../store/index.js');
  await noteDemo(config, command.name);
  return runSourcesCommand(
    command.name.slice('sources '.length) as 'add',
    args,
    { json, every: str('every'), urgency: str('urgency') },
    config,
    {
      out,
      err,
      now: Date.now,
      openStore: (role) => openStore(config, { role, postgres: { schema: config.databaseSchema } }),
    },
  );
}

async function webhooksCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json, str, command } = run;
  const { runWebhooksCommand } = await import('./webhooks.js');
  const { openStore } = await import('../store/index.js');
  await noteDemo(config, command.name);
  return runWebhooksCommand(
    command.name.slice('webhooks '.length) as 'add',
    args,
    { json, tickers: str('tickers'), minRelevance: str('min-relevance'), account: str('account') },
    config,
    {
      out,
      err,
      now: Date.now,
      openStore: () => openStore(config, { role: 'cli', postgres: { schema: config.databaseSchema } }),
    },
  );
}

async function statusCommand(run: CommandRun): Promise<number | 'running'> {
  const { config, args, json, str, command } = run;
  const { runStatusCommand } = await import('./status.js');
  const { openStore } = await import('../store/index.js');
  await noteDemo(config, command.name);
  return runStatusCommand(
    command.name.slice('status '.length) as 'note',
    args,
    { json, component: str('component') },
    {
      out,
      now: Date.now,
      openStore: () => openStore(config, { role: 'cli', postgres: { schema: config.databaseSchema } }),
    },
  );
}

const HANDLERS: Record<string, (run: CommandRun) => Promise<number | 'running'>> = {
  serve: serveCommand,
  demo: demoCommand,
  'accounts create': accountsCreateCommand,
  'accounts show': accountsShowCommand,
  'accounts set-tier': accountsSetTierCommand,
  'accounts cancel': accountsCancelCommand,
  'keys create': keysCreateCommand,
  'keys list': keysListCommand,
  'keys deactivate': keysSetActiveCommand,
  'keys activate': keysSetActiveCommand,
  'articles ingest': articlesIngestCommand,
  'articles show': articlesShowCommand,
  'tickers lookup': tickersLookupCommand,
  migrate: migrateCommand,
  'sources add': sourcesCommand,
  'sources list': sourcesCommand,
  'sources pause': sourcesCommand,
  'sources resume': sourcesCommand,
  'sources remove': sourcesCommand,
  'sources run': sourcesCommand,
  'webhooks add': webhooksCommand,
  'webhooks list': webhooksCommand,
  'webhooks remove': webhooksCommand,
  'webhooks pause': webhooksCommand,
  'webhooks resume': webhooksCommand,
  'webhooks rotate-secret': webhooksCommand,
  'webhooks send-test': webhooksCommand,
  'status note': statusCommand,
  'status resolve': statusCommand,
  'status show': statusCommand,
};

/** Runs one command line; the exit code, or 'running' for a service that stops on a signal. */
async function main(argv: string[]): Promise<number | 'running'> {
  const parsed = parseCommandLine(argv);
  if (parsed.kind === 'help') {
    out(parsed.text);
    return EXIT.ok;
  }
  const { command, args, options } = parsed;
  const json = options.json === true;
  const str = (name: OptionName) => (typeof options[name] === 'string' ? (options[name] as string) : undefined);
  // Every command reads the contract (tiers, limits) from generated/: refuse a stale one.
  const stale = staleGenerated();
  if (stale) throw new ConfigError(stale);
  const config = loadConfig();
  context.dataDir = config.dataDir;
  const now = Date.now();

  const handler = HANDLERS[command.name];
  if (!handler) throw new Error(`fns ${command.name}: parsed but not implemented`);
  return handler({ command, args, options, json, str, config, now });
}

/** One line for an expected failure; the stack only for an unexpected one. */
function failure(e: unknown): number {
  const known = explain(e, context);
  if (known) {
    err(`fns: ${known.message}`);
    return known.exitCode;
  }
  err(`fns: unexpected error\n${(e as Error)?.stack ?? String(e)}`);
  return EXIT.failed;
}

/** Waits until everything written so far has been handed to the OS (a pipe may take it slowly). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

async function exit(code: number): Promise<never> {
  process.exitCode = code;
  await flushed(process.stdout);
  await flushed(process.stderr);
  process.exit(code);
}

// A reader that goes away (`fns keys list | head -1`) is not an error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok);
    throw e;
  });
}

main(process.argv.slice(2)).then(
  (code) => (code === 'running' ? undefined : exit(code)),
  (e) => exit(failure(e)),
);

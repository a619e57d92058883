/**
 * `fns`, the operator command line (docs/operations.md). Changes go straight to the store, which a running service
 * reads on every request. Output is complete on a pipe: the process exits only once stdout and stderr are flushed.
 */
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { staleGenerated } from '../contract/freshness.js';
import { livePrefix } from '../auth/prefix.js';
import type { SourceStore } from '../store/ports/index.js';
import { parseCommandLine, parseHost, parsePort, type OptionName } from './commands.js';
import { isStoreBusy } from '../store/ports/errors.js';
import { CliError, EXIT, explain, type ErrorContext } from './errors.js';
import { openInput, readLines } from './input.js';
import { err, openStore, out, storeFactory, withStore, type CommandRun, type Handler } from './io.js';
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
import { printable, printableJson } from '../domain/printable.js';

/** What the current command works on, to name it in an error message. */
const context: ErrorContext = {};

/** The listener settings of serve and demo: --port / --host over PORT / HOST. */
function listenConfig({ config, option }: CommandRun): Config {
  const cfg = { ...config };
  const port = option('port');
  const host = option('host');
  if (port !== undefined) cfg.port = parsePort(port);
  if (host !== undefined) cfg.host = parseHost(host);
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

/** An ingest that did not store every line: a duplicate line is done (its article is stored), a skipped one is not. */
function notAllStored(r: IngestReport): number {
  return r.ingested + r.duplicates.length > 0 ? EXIT.partial : EXIT.failed;
}

async function articlesIngest({ args, config, print }: CommandRun): Promise<number> {
  const file = args[0]!;
  const input = await openInput(file);
  if (file === '-' && process.stdin.isTTY) err('fns: reading NDJSON from standard input; end it with Ctrl+D');
  const store = await openStore(config);
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
    print(report, ingestSummary(report));
    return report.errors.length === 0 ? EXIT.ok : notAllStored(report);
  } catch (e) {
    progress.clear();
    if (!(e instanceof IngestStopped)) throw e;
    const reason = interrupt.signal.aborted ? interrupt.signal.reason : e.reason;
    // Nothing settled: only the reason matters (e.g. the input is a directory).
    if (e.doneThroughLine === 0) throw reason;
    print({ ...e.report, stopped_after_line: e.doneThroughLine }, ingestSummary(e.report));
    const why = explain(reason, context)?.message ?? (reason as Error)?.stack ?? String(reason);
    err(`fns: stopped after line ${e.doneThroughLine}: ${why}`);
    err(
      `fns: lines 1-${e.doneThroughLine} are done (stored or skipped) and nothing after them was stored: resume from line ${e.doneThroughLine + 1}`,
    );
    return notAllStored(e.report);
  } finally {
    process.off('SIGINT', onSigint);
    await store.close();
    input.destroy();
  }
}

async function serve(run: CommandRun): Promise<number> {
  const cfg = listenConfig(run);
  // Loaded only by the commands that run the service: the data commands start without it.
  const { startService } = await import('../server/index.js');
  const svc = await startService(cfg);
  const data = cfg.databaseUrl ? `PostgreSQL schema ${cfg.databaseSchema}` : (await storeFactory()).sqliteFile(cfg);
  out(`fns: listening on ${svc.url} (data: ${data})`);
  if (svc.adminUrl) out(`fns: admin listener on ${svc.adminUrl}`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await svc.close();
  return EXIT.ok;
}

async function demo(run: CommandRun): Promise<'running'> {
  await (await import('./demo.js')).runDemo(listenConfig(run), { json: run.json });
  return 'running';
}

async function accountsCreate({ config, option, now, print }: CommandRun): Promise<number> {
  const acct = await withStore(config, (s) => createAccount(s.accounts, { tier: option('tier'), now }), {
    write: true,
  });
  print(
    acct,
    `account: ${acct.account_id}\ntier:    ${acct.tier}${acct.period_end ? `, period ends ${acct.period_end}` : ''}\n(add a key: fns keys create --account ${acct.account_id})`,
  );
  return EXIT.ok;
}

async function accountsShow({ config, args, now, print }: CommandRun): Promise<number> {
  const a = await withStore(config, (s) => showAccount(s.accounts, args[0]!, now));
  const tier = a.effective_tier === a.tier ? a.tier : `${a.tier} (in force now: ${a.effective_tier})`;
  const keys = a.keys.map(
    (k) => `  ${k.key_id}  ${(k.active ? 'active' : 'inactive').padEnd(8)}  created ${k.created_at}`,
  );
  print(
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

async function accountsSetTier({ config, args, now, print }: CommandRun): Promise<number> {
  const a = await withStore(config, (s) => setTier(s.accounts, args[0]!, args[1], now), { write: true });
  print(a, `${a.account_id}: ${a.tier}, period ends ${a.period_end ?? '-'}`);
  return EXIT.ok;
}

async function accountsCancel({ config, args, now, print }: CommandRun): Promise<number> {
  const a = await withStore(config, (s) => cancel(s.accounts, args[0]!, now), { write: true });
  print(a, `${a.account_id}: cancelled at ${a.cancelled_at} (expired for 7 days, then free)`);
  return EXIT.ok;
}

async function keysCreate({ config, option, now, print }: CommandRun): Promise<number> {
  const k = await withStore(
    config,
    (s) =>
      createKey(s.accounts, {
        tier: option('tier'),
        accountId: option('account'),
        livePrefix: livePrefix(config),
        now,
      }),
    { write: true },
  );
  print(
    k,
    `key:     ${k.key}\nkey_id:  ${k.key_id}\naccount: ${k.account_id}\n(the key is shown only this once; store it now)`,
  );
  return EXIT.ok;
}

async function keysList({ config, option, print }: CommandRun): Promise<number> {
  const account = option('account');
  const list = await withStore(config, (s) => listKeys(s.accounts, account));
  const rows = list.keys.map(
    (k) => `${k.key_id}  ${k.account_id}  ${(k.active ? 'active' : 'inactive').padEnd(8)}  ${k.created_at}`,
  );
  const none = account
    ? `account ${account} has no keys (fns keys create --account ${account} adds one)`
    : 'no keys yet (fns keys create --tier <tier> makes one)';
  print(list, rows.length ? rows.join('\n') : none);
  return EXIT.ok;
}

async function keysSetActive({ config, args, print }: CommandRun, active: boolean): Promise<number> {
  const k = await withStore(config, (s) => setKeyActive(s.accounts, args[0]!, active), { write: true });
  print(k, `${k.key_id}: ${k.active ? 'active' : 'inactive'}`);
  return EXIT.ok;
}

async function articlesShow({ config, args, print }: CommandRun): Promise<number> {
  const a = await withStore(config, (s) => showArticle(s, args[0]!));
  // Pushed, ingested or polled text, each field on its line: escaped (domain/printable.ts).
  const p = (v: string | null | undefined) => (v == null ? '-' : printable(v));
  const carriers = a.carriers.map((c) => `  ${p(c.source)}  ${p(c.at)}  ${c.reason ?? 'first'}  ${p(c.url)}`);
  const items = a.items.map(
    (i) => `  ${p(i.source)}  ${p(i.external_id)}  ${p(i.seen_at)}  ${i.reason ?? 'stored'}  ${p(i.url)}`,
  );
  print(
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

async function tickersLookup({ args, print }: CommandRun): Promise<number> {
  // Loaded by this command only: the directory and the sentiment model are not needed to start the others.
  const { articleMentions, enrich, explainMentions, tickerRelevance } = await import('../enrich/index.js');
  const text = args[0]!;
  const e = enrich(text);
  const candidates = explainMentions(text);
  const roles = tickerRelevance(text, articleMentions(text));
  print(
    {
      text,
      sentiment: e.sentiment,
      tickers: e.tickers.map((t) => ({ ...t, role: roles.get(t.ticker)?.role ?? null })),
      candidates,
    },
    [
      `text:       ${printable(text)}`,
      `sentiment:  ${e.sentiment}`,
      `tickers:    ${e.tickers.length ? e.tickers.map((t) => `${t.ticker} ${t.sentiment} ${t.relevance} (${roles.get(t.ticker)?.role ?? 'given'})`).join(', ') : '-'}`,
      `candidates: ${candidates.length}${candidates.length ? ' (as written, symbol, by, kept or refused: rule)' : ''}`,
      ...candidates.map(
        (c) =>
          `  ${printable(c.text)}  ${c.ticker}  ${c.via}${c.alias ? ` "${printable(c.alias)}"` : ''}  ${c.kept ? 'kept' : 'refused'}: ${printable(c.rule)}`,
      ),
    ].join('\n'),
  );
  return EXIT.ok;
}

async function migrate({ config, print }: CommandRun): Promise<number> {
  // PostgreSQL applies what is missing under a lock; SQLite applies them when the file is opened.
  if (config.databaseUrl) {
    const { LATEST_VERSION, migrate } = await import('../store/postgres/index.js');
    const applied = await migrate(config.databaseUrl, config.databaseSchema);
    print(
      { engine: 'postgres', schema: config.databaseSchema, applied, version: LATEST_VERSION },
      applied.length
        ? `applied migration(s) ${applied.join(', ')}; schema ${config.databaseSchema} is at version ${LATEST_VERSION}`
        : `schema ${config.databaseSchema} is up to date (version ${LATEST_VERSION})`,
    );
  } else {
    await (await openStore(config)).close();
    const file = (await storeFactory()).sqliteFile(config);
    print({ engine: 'sqlite', file }, `${file} is up to date`);
  }
  return EXIT.ok;
}

/** A handler whose module is loaded by its own command only, like the store. */
function lazy<K extends string, M extends Record<K, Handler>>(load: () => Promise<M>, name: K): Handler {
  return async (run) => (await load())[name](run);
}
const sources = () => import('./sources.js');
const webhooks = () => import('./webhooks.js');
const status = () => import('./status.js');

const HANDLERS: Record<string, Handler> = {
  serve,
  demo,
  migrate,
  'accounts create': accountsCreate,
  'accounts show': accountsShow,
  'accounts set-tier': accountsSetTier,
  'accounts cancel': accountsCancel,
  'keys create': keysCreate,
  'keys list': keysList,
  'keys deactivate': (run) => keysSetActive(run, false),
  'keys activate': (run) => keysSetActive(run, true),
  'articles ingest': articlesIngest,
  'articles show': articlesShow,
  'tickers lookup': tickersLookup,
  'sources add': lazy(sources, 'addSource'),
  'sources list': lazy(sources, 'listSources'),
  'sources pause': lazy(sources, 'pauseSource'),
  'sources resume': lazy(sources, 'resumeSource'),
  'sources remove': lazy(sources, 'removeSource'),
  'sources run': lazy(sources, 'runPoller'),
  'webhooks add': lazy(webhooks, 'addWebhook'),
  'webhooks list': lazy(webhooks, 'listWebhooks'),
  'webhooks remove': lazy(webhooks, 'removeWebhook'),
  'webhooks pause': lazy(webhooks, 'pauseWebhook'),
  'webhooks resume': lazy(webhooks, 'resumeWebhook'),
  'webhooks rotate-secret': lazy(webhooks, 'rotateWebhookSecret'),
  'webhooks send-test': lazy(webhooks, 'sendTestWebhook'),
  'status note': lazy(status, 'addNote'),
  'status resolve': lazy(status, 'resolveNotes'),
  'status show': lazy(status, 'showStatus'),
};

/** The data commands that may create an empty store: they say so when a demo's store is elsewhere. */
const NOTES_DEMO = /^(articles ingest|sources |webhooks |status )/;

/** Runs one command line; the exit code, or 'running' for a service that stops on a signal. */
async function main(argv: string[]): Promise<number | 'running'> {
  const parsed = parseCommandLine(argv);
  if (parsed.kind === 'help') {
    out(parsed.text);
    return EXIT.ok;
  }
  const { command, args, options } = parsed;
  const json = options.json === true;
  const option = (name: OptionName) => {
    const value = options[name];
    return typeof value === 'string' ? value : undefined;
  };
  const print = (data: unknown, human: string) => out(json ? printableJson(data) : human);
  // Every command reads the contract (tiers, limits) from generated/: refuse a stale one.
  const stale = staleGenerated();
  if (stale) throw new ConfigError(stale);
  const config = loadConfig();
  context.dataDir = config.dataDir;
  const now = Date.now();

  const handler = HANDLERS[command.name];
  if (!handler) throw new Error(`fns ${command.name}: parsed but not implemented`);
  // A data command about to create an empty SQLite store beside a demo's says where the demo's data is.
  if (NOTES_DEMO.test(command.name) && !config.databaseUrl) {
    const hint = demoHint(config.dataDir, (await storeFactory()).sqliteFile(config), command.name);
    if (hint) err(hint);
  }
  return handler({ args, json, option, config, now, print });
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

/** The commands of `fns`, their help, and the parsing of a command line; a wrong one is a UsageError (exit 2). */
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { assignableTiers } from '../contract/index.js';
import { EXIT, UsageError } from './errors.js';

const OPTIONS = {
  json: { type: 'boolean' },
  tier: { type: 'string' },
  account: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  every: { type: 'string' },
  urgency: { type: 'string' },
  tickers: { type: 'string' },
  'min-relevance': { type: 'string' },
  component: { type: 'string' },
} as const;
export type OptionName = keyof typeof OPTIONS;

export interface CommandSpec {
  name: string;
  /** What follows `fns <name>`; several lines for several forms. */
  synopsis: string[];
  summary: string;
  details: string;
  args: { name: string; optional?: boolean }[];
  options: OptionName[];
}

const TIERS = assignableTiers.join(', ');

export const commands: CommandSpec[] = [
  {
    name: 'serve',
    synopsis: ['[--port N] [--host H]'],
    summary: 'run the service: REST and the stream on one port',
    details:
      'Listens on --port (else PORT, default 8080) and --host (else HOST, default 0.0.0.0); --port 0 picks a free port.\nPrints "listening on <url>" once ready. SIGTERM or Ctrl+C closes open streams (1001) and exits 0.',
    args: [],
    options: ['port', 'host'],
  },
  {
    name: 'migrate',
    synopsis: ['[--json]'],
    summary: 'apply the database migrations (PostgreSQL with DATABASE_URL, else the SQLite file)',
    details:
      'Applies every missing migration of DATABASE_URL / DATABASE_SCHEMA (or of the SQLite file in DATA_DIR), under a lock, and\nsays which. The service applies them at start as well; run this first when several instances start together.',
    args: [],
    options: ['json'],
  },
  {
    name: 'demo',
    synopsis: ['[--port N] [--json]'],
    summary: 'a ready-to-try instance: sample articles, one key per tier',
    details:
      'A fresh archive in DATA_DIR/demo (recreated on every run), one key per tier printed once, and first requests to copy.',
    args: [],
    options: ['port', 'json'],
  },
  {
    name: 'accounts create',
    synopsis: ['--tier <tier> [--json]'],
    summary: 'a new account (id generated); add keys with keys create --account',
    details: `Tiers: ${TIERS} (free: an account that never subscribed). A paid tier starts a one-month billing period.`,
    args: [],
    options: ['tier', 'json'],
  },
  {
    name: 'accounts show',
    synopsis: ['<account_id> [--json]'],
    summary: 'tier, billing period, cancellation, its keys and their state',
    details:
      'Shows the tier as set and the tier in force now (a cancelled account is expired for 7 days, then free), the end of the\nbilling period, the cancellation time, and each key: id, active or not, created. Never a key itself.',
    args: [{ name: 'account_id' }],
    options: ['json'],
  },
  {
    name: 'accounts set-tier',
    synopsis: ['<account_id> <tier> [--json]'],
    summary: 'start, upgrade or downgrade (new billing period)',
    details: `Tiers: ${TIERS}. Clears a cancellation. Takes effect on a running service at once.`,
    args: [{ name: 'account_id' }, { name: 'tier' }],
    options: ['json'],
  },
  {
    name: 'accounts cancel',
    synopsis: ['<account_id> [--json]'],
    summary: 'to expired (1 req/min) for 7 days, then free',
    details:
      'Only a subscription (a paid tier) can be cancelled, and only once; fns accounts set-tier starts a new one.',
    args: [{ name: 'account_id' }],
    options: ['json'],
  },
  {
    name: 'keys create',
    synopsis: ['--tier <tier> [--json]', '--account <account_id> [--json]'],
    summary: 'a new account and its first key, or one more key on an account',
    details: `--tier <tier>: a new account on that tier (${TIERS}) and its first key.\n--account <account_id>: one more key on an existing account (it shares the plan and the stream slot);\nan unknown account is refused: make one with fns accounts create.\nThe key is printed once and only its SHA-256 is stored.`,
    args: [],
    options: ['tier', 'account', 'json'],
  },
  {
    name: 'keys list',
    synopsis: ['[--account <account_id>] [--json]'],
    summary: 'key ids, their account and state (never the keys)',
    details: 'Every key, or the keys of one account, oldest first.',
    args: [],
    options: ['account', 'json'],
  },
  {
    name: 'keys deactivate',
    synopsis: ['<key_id> [--json]'],
    summary: 'the key is refused (403) from now on',
    details: 'Takes effect on a running service at once; fns keys activate undoes it.',
    args: [{ name: 'key_id' }],
    options: ['json'],
  },
  {
    name: 'keys activate',
    synopsis: ['<key_id> [--json]'],
    summary: 'undoes keys deactivate',
    details: 'Takes effect on a running service at once.',
    args: [{ name: 'key_id' }],
    options: ['json'],
  },
  {
    name: 'articles ingest',
    synopsis: ['<file.ndjson | -> [--json]'],
    summary: 'NDJSON, one article per line (- reads standard input)',
    details:
      'Stores the good lines in transactions of at most 1,000 articles and reports each bad line by number (skipped).\nThe report: lines read, articles stored and their ids (--json), skipped lines. On a terminal, a progress line\non standard error. If it stops early (e.g. the database stays busy), it says up to which line the input is done.\nExit 0: every line stored; 3: some stored, some not; 1: none stored.',
    args: [{ name: 'file' }],
    options: ['json'],
  },
  {
    name: 'articles show',
    synopsis: ['<article_id> [--json]'],
    summary: 'one article: its source and url, the sources that carried it, and why each repeat was a duplicate',
    details:
      'Shows the article (every field, tickers included), its carriers (the first source, then each source whose copy\nwas merged, with its link, time and reason: same-url or near-duplicate) and the items that resolved to it (each\nsource\'s id of the item, its canonical link, when last seen, and its reason: same-item, same-url, same-headline,\nnear-duplicate; "stored" for the item that was stored).',
    args: [{ name: 'article_id' }],
    options: ['json'],
  },
  {
    name: 'tickers lookup',
    synopsis: ['<text> [--json]'],
    summary:
      'what a headline resolves to: its tickers and sentiment, and every candidate name with the rule that kept or refused it',
    details:
      'Runs the enrichment of the service on <text> (quote it) without storing anything: the article label, the tickers\nwith their sentiment as an article would carry them, then each candidate the matcher weighed (cashtag, exchange\nsymbol or directory name), kept or refused, with its rule (e.g. "vetoed by the word after it (pie)", "a person\'s\nname"). To add or correct a company: docs/sources.md, "The company directory".',
    args: [{ name: 'text' }],
    options: ['json'],
  },
  // fns sources …: src/cli/sources.ts (validation, output, the poller process).
  {
    name: 'sources add',
    synopsis: ['<name> <url> [--every 60s] [--urgency <u>] [--json]'],
    summary: 'register a feed (RSS, RDF, Atom, JSON Feed) to poll',
    details:
      '<name> (1-64 letters, digits, ".", "_", "-") becomes each article\'s source; <url> is http:// or https://.\n--every: the poll interval, 1s to 24h (default 60s; the feed\'s ttl / sy:updatePeriod is a floor).\n--urgency: auto (the default: derived from the headline, e.g. "BREAKING:"), breaking, flash or regular.\nA running fns serve or fns sources run starts polling it within a second. A name already taken is refused (exit 1).\nA feed (or a redirect) on a private, loopback or link-local address is polled only with FEED_ALLOW_PRIVATE=true.',
    args: [{ name: 'name' }, { name: 'url' }],
    options: ['every', 'urgency', 'json'],
  },
  {
    name: 'sources list',
    synopsis: ['[--json]'],
    summary: 'every source: last poll, HTTP status, items seen / ingested / deduplicated, last error, next poll',
    details:
      "Oldest first. Seen: new items the feed offered; deduplicated: new items that were another source's story (same URL or near-duplicate).",
    args: [],
    options: ['json'],
  },
  {
    name: 'sources pause',
    synopsis: ['<name> [--json]'],
    summary: 'stop polling a source (within a second); its articles stay',
    details: 'fns sources resume undoes it.',
    args: [{ name: 'name' }],
    options: ['json'],
  },
  {
    name: 'sources resume',
    synopsis: ['<name> [--json]'],
    summary: 'poll a paused source again',
    details: 'It is polled within a second.',
    args: [{ name: 'name' }],
    options: ['json'],
  },
  {
    name: 'sources remove',
    synopsis: ['<name> [--json]'],
    summary: 'forget a source (its articles stay in the archive)',
    details: 'Polling stops within a second.',
    args: [{ name: 'name' }],
    options: ['json'],
  },
  {
    name: 'sources run',
    synopsis: [''],
    summary: 'the poller alone, in its own process (fns serve polls too)',
    details:
      'Polls every active source on its schedule and prints a line per poll that found new items or failed. With several\npollers (fns serve instances, fns sources run) each source is polled by exactly one at a time (a lease). Stops on\nSIGTERM or Ctrl+C, giving back the sources it holds.',
    args: [],
    options: [],
  },
  // fns webhooks …: src/cli/webhooks.ts (validation, output, send-test).
  {
    name: 'webhooks add',
    synopsis: ['<account_id> <url> [--tickers A,B [--min-relevance R]] [--json]'],
    summary: 'register a webhook endpoint of a pro or max account; prints its id and secret (once)',
    details:
      '<url> must be https on a public address (checked after DNS resolution; WEBHOOK_ALLOW_PRIVATE=true also allows\nprivate addresses and http). --tickers (max accounts only): only articles about one of these symbols: one of them with a relevance of at least\n--min-relevance (0 to 1, default 0.5, as min_relevance on the stream; 0: every article naming one).\nEvery article stored from now on is POSTed to it, signed (Standard Webhooks) with the secret printed here, once.\nA starter, expired or free account is refused (exit 1).',
    args: [{ name: 'account_id' }, { name: 'url' }],
    options: ['tickers', 'min-relevance', 'json'],
  },
  {
    name: 'webhooks list',
    synopsis: ['[--account <id>] [--json]'],
    summary: 'every endpoint: state, last success, last error, failures in a row, next attempt, backlog',
    details:
      'Oldest first. Backlog: articles stored after the last one the endpoint received (or skipped by its ticker filter).\nA paused or disabled endpoint says why (operator, 24 h of failures, 410 Gone, the account left pro/max).',
    args: [],
    options: ['account', 'json'],
  },
  {
    name: 'webhooks remove',
    synopsis: ['<id> [--json]'],
    summary: 'forget an endpoint (nothing more is sent to it)',
    details: 'Within a few seconds a running fns serve stops sending to it.',
    args: [{ name: 'id' }],
    options: ['json'],
  },
  {
    name: 'webhooks pause',
    synopsis: ['<id> [--json]'],
    summary: 'stop sending to an endpoint; its backlog keeps growing',
    details: 'fns webhooks resume sends the backlog, in order.',
    args: [{ name: 'id' }],
    options: ['json'],
  },
  {
    name: 'webhooks resume',
    synopsis: ['<id> [--json]'],
    summary: 'send again to a paused or disabled endpoint, from where it stopped',
    details:
      'Clears the failure run; the backlog is sent in order within a few seconds. The account must be pro or max (max for an endpoint with --tickers).',
    args: [{ name: 'id' }],
    options: ['json'],
  },
  {
    name: 'webhooks rotate-secret',
    synopsis: ['<id> [--json]'],
    summary: 'a new signing secret (printed once); the previous ones keep signing for 24 h',
    details:
      'For 24 hours every delivery is also signed with the previous secret, so the receiver can switch at any time. At most 3 previous\nsecrets sign beside the new one: a rotation beyond that drops the oldest (the answer says so).',
    args: [{ name: 'id' }],
    options: ['json'],
  },
  {
    name: 'webhooks send-test',
    synopsis: ['<id> [--json]'],
    summary: 'send one signed delivery now (the newest article, or a sample) and print the answer',
    details:
      "From this process, whatever the endpoint's state; its cursor does not move. Exit 1 when the answer is not 2xx.",
    args: [{ name: 'id' }],
    options: ['json'],
  },
  {
    name: 'status note',
    synopsis: ['<message> [--component <component>] [--json]'],
    summary: 'an operator note on the public status page (until resolved)',
    details:
      'One line of up to 500 characters, shown on /status and /v1/status by every instance within a few seconds.\n--component: service (default), rest, stream, webhooks, search, or source:<name> of a registered source.',
    args: [{ name: 'message' }],
    options: ['component', 'json'],
  },
  {
    name: 'status resolve',
    synopsis: ['[<id>] [--json]'],
    summary: 'end an open note (inc_12), or every open note',
    details: 'A resolved note stays in the incident history of the status page (90 days).',
    args: [{ name: 'id', optional: true }],
    options: ['json'],
  },
  {
    name: 'status show',
    synopsis: ['[--json]'],
    summary: 'the status report the running instances serve now',
    details:
      'The overall state, each component and source, and the open incidents; --json: the report as /v1/status answers it.',
    args: [],
    options: ['json'],
  },
  {
    name: 'help',
    synopsis: ['[command]'],
    summary: 'this text, or one command in detail (also: fns <command> --help)',
    details: 'fns help keys create, fns keys create --help and fns keys create -h are the same.',
    args: [{ name: 'command', optional: true }],
    options: [],
  },
];

const EXIT_TEXT = `Exit codes
  ${EXIT.ok}  done
  ${EXIT.failed}  not done: refused (no such account, key or source, nothing to cancel, ...) or failed (unreadable
     file, port in use, database busy, no line of an ingest stored, an unexpected error)
  ${EXIT.usage}  usage or configuration error: unknown command or option, option given twice, missing or
     extra argument, invalid value (tier, port), invalid environment variable
  ${EXIT.partial}  partial ingest: some articles stored, others not (bad lines skipped, or stopped early)`;

/** One row per form of each command, `fns <name> <synopsis>`, with the summary beside its first form, aligned. */
function summaries(list: CommandSpec[]): string {
  const rows = list.flatMap((c) =>
    c.synopsis.map((s, i) => [`fns ${c.name} ${s}`.trimEnd(), i === 0 ? c.summary : '']),
  );
  const width = Math.max(...rows.map(([l]) => l!.length)) + 2;
  return rows.map(([l, r]) => `  ${l!.padEnd(width)}${r}`.trimEnd()).join('\n');
}

function generalHelp(): string {
  return `fns: operate the Financial News Service

Usage: fns <command> [arguments] [options]

${summaries(commands)}

Tiers: ${TIERS}. Every command that prints data accepts --json (one JSON document on standard output).
Help on one command: fns help <command> or fns <command> --help.
Configuration: environment variables (PORT, HOST, DATA_DIR, ...), described in docs/operations.md.

${EXIT_TEXT}`;
}

function commandHelp(c: CommandSpec): string {
  const usage = c.synopsis.map((s, i) => `${i === 0 ? 'Usage: ' : '       '}fns ${c.name} ${s}`).join('\n');
  return `${usage}\n\n${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.\n${c.details}\n\nExit codes: 0 done, 1 not done, 2 usage error${c.name === 'articles ingest' ? ', 3 partial ingest' : ''} (fns help lists them).`;
}

function usageOf(c: CommandSpec): string {
  return c.synopsis.map((s) => `usage: fns ${c.name} ${s}`).join('\n');
}

export type ParsedCommandLine =
  | { kind: 'help'; text: string }
  | { kind: 'run'; command: CommandSpec; args: string[]; options: Partial<Record<OptionName, string | boolean>> };

function findCommand(words: string[]): { command: CommandSpec; rest: string[] } | undefined {
  const two = commands.find((c) => c.name === `${words[0]} ${words[1]}`);
  if (two) return { command: two, rest: words.slice(2) };
  const one = commands.find((c) => c.name === words[0]);
  return one && { command: one, rest: words.slice(1) };
}

/** The commands of a group (`keys`, `sources`, ...): the words before a command's last one. */
function groupOf(word: string | undefined): CommandSpec[] {
  return commands.filter((c) => c.name.startsWith(`${word} `));
}

/** `fns sources --help`, `fns help sources`: the group's commands, each with its summary. */
function groupHelp(word: string): string {
  return `Usage: fns ${word} <command> [arguments] [options]

${summaries(groupOf(word))}

Help on one command: fns help ${word} <command> or fns ${word} <command> --help.
Exit codes: 0 done, 1 not done, 2 usage error (fns help lists them).`;
}

function unknownCommand(words: string[]): UsageError {
  const group = groupOf(words[0]);
  if (group.length > 0) {
    const what =
      words.length > 1 ? `unknown command "${words.slice(0, 2).join(' ')}"` : `"${words[0]}" needs a command`;
    return new UsageError(`${what}; one of:\n${group.map((c) => `  fns ${c.name} ${c.synopsis[0]}`).join('\n')}`);
  }
  return new UsageError(`unknown command "${words[0]}"\n\n${generalHelp()}`);
}

/** Parses argv (without node and the script). Throws UsageError for anything it cannot run as given. */
export function parseCommandLine(argv: string[]): ParsedCommandLine {
  // strict: unknown options and missing values throw (ERR_PARSE_ARGS_*, exit 2 with the message).
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
    tokens: true,
  });

  const seen = new Map<string, string>();
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const earlier = seen.get(t.name);
    if (earlier !== undefined)
      throw new UsageError(
        `${earlier === t.rawName ? t.rawName : `${earlier} / ${t.rawName}`} is given more than once`,
      );
    seen.set(t.name, t.rawName);
  }

  if (positionals.length === 0) {
    if (values.help) return { kind: 'help', text: generalHelp() };
    throw new UsageError(`no command given\n\n${generalHelp()}`);
  }
  if (positionals[0] === 'help') {
    onlyHelp(seen, 'fns help');
    if (positionals.length === 1) return { kind: 'help', text: generalHelp() };
    const found = findCommand(positionals.slice(1));
    if (!found && positionals.length === 2 && groupOf(positionals[1]).length > 0)
      return { kind: 'help', text: groupHelp(positionals[1]!) };
    if (!found) throw unknownCommand(positionals.slice(1));
    if (found.rest.length > 0)
      throw new UsageError(`unexpected argument "${found.rest[0]}" after fns help ${found.command.name}`);
    return { kind: 'help', text: commandHelp(found.command) };
  }

  const found = findCommand(positionals);
  if (!found && values.help && positionals.length === 1 && groupOf(positionals[0]).length > 0) {
    onlyHelp(seen, `fns ${positionals[0]} --help`);
    return { kind: 'help', text: groupHelp(positionals[0]!) };
  }
  if (!found) throw unknownCommand(positionals);
  const { command, rest } = found;
  if (values.help) return { kind: 'help', text: commandHelp(command) };

  for (const [name, raw] of seen) {
    if (!command.options.includes(name as OptionName))
      throw new UsageError(`fns ${command.name} does not take ${raw}\n${usageOf(command)}`);
  }
  if (rest.length > command.args.length) {
    throw new UsageError(`unexpected argument "${rest[command.args.length]}"\n${usageOf(command)}`);
  }
  const missing = command.args.slice(rest.length).filter((a) => !a.optional);
  if (missing.length > 0)
    throw new UsageError(`missing ${missing.map((a) => `<${a.name}>`).join(' ')}\n${usageOf(command)}`);

  if (values.port !== undefined) parsePort(values.port);
  if (values.host !== undefined) parseHost(values.host);

  return { kind: 'run', command, args: rest, options: values };
}

/** A help request takes no other option. */
function onlyHelp(seen: Map<string, string>, what: string): void {
  for (const name of seen.keys()) if (name !== 'help') throw new UsageError(`${what} does not take --${name}`);
}

/** A port as PORT accepts it: an integer from 0 to 65535. */
export function parsePort(raw: string): number {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535)
    throw new UsageError(`--port must be an integer between 0 and 65535, got "${raw}"`);
  return Number(raw);
}

/** A host to listen on, as HOST accepts it: an IP address or a host name. */
export function parseHost(raw: string): string {
  if (isIP(raw) === 0 && !/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/i.test(raw)) {
    throw new UsageError(`--host must be an IP address or a host name to listen on, got "${raw}"`);
  }
  return raw;
}

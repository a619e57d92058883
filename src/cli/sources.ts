/**
 * `fns sources …`: the source registry, and `fns sources run`, the poller alone in its own process. Refusals exit
 * 1 (a name taken, no such source); a bad name, URL, duration or urgency is a usage error (exit 2).
 */
import { lineLog } from '../domain/log.js';
import { urgencies } from '../contract/index.js';
import type { SourceRecord, UrgencySetting } from '../store/ports/index.js';
import { SourceExistsError } from '../store/ports/errors.js';
import { SOURCE_NAME } from '../domain/source-name.js';
import { printable } from '../domain/printable.js';
import { CliError, EXIT, UsageError } from './errors.js';
import { err, openStore, out, table, withStore, type CommandRun } from './io.js';

/** `--every`: the default, and the bounds an operator may choose within. */
export const SOURCE_EVERY = { defaultMs: 60_000, minMs: 1_000, maxMs: 24 * 3600_000 } as const;

const SOURCE_URGENCIES: readonly UrgencySetting[] = ['auto', ...urgencies];

/** The longest feed or webhook URL accepted. */
export const URL_MAX = 2048;

function checkSourceName(raw: string): string {
  if (!SOURCE_NAME.test(raw)) {
    throw new UsageError(
      `a source name is 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit; got "${raw}"`,
    );
  }
  return raw;
}

function checkSourceUrl(raw: string): string {
  // The length first, as fns webhooks add: one rule for both commands whatever else is wrong with the URL.
  if (raw.length > URL_MAX) throw new UsageError(`<url> is longer than ${URL_MAX} characters`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`<url> must be an absolute http:// or https:// URL, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new UsageError(`<url> must use http or https, got "${u.protocol.replace(/:$/, '')}"`);
  if (u.username || u.password)
    throw new UsageError(
      '<url> must not carry a user name or password (it would show in fns sources list and the logs)',
    );
  return u.href;
}

function checkUrgency(raw: string | undefined): UrgencySetting {
  if (raw === undefined) return 'auto';
  if (!SOURCE_URGENCIES.includes(raw as UrgencySetting))
    throw new UsageError(`--urgency must be one of ${SOURCE_URGENCIES.join(', ')}, got "${raw}"`);
  return raw as UrgencySetting;
}

/** A duration's parts: digits and a unit, each unit at most once, largest first. */
const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/**
 * A duration (`30s`, `1500ms`, `1m30s`) within SOURCE_EVERY's bounds; each unit at most once, largest first (`30s1m`
 * refused).
 */
export function parseDuration(raw: string): number {
  const bounds = `between ${formatDuration(SOURCE_EVERY.minMs)} and ${formatDuration(SOURCE_EVERY.maxMs)}`;
  const parts = raw === '' ? null : DURATION.exec(raw);
  if (!parts)
    throw new UsageError(
      `--every must be a duration such as 30s, 5m, 1h or 1m30s (units h, m, s, ms, each at most once, largest first) ${bounds}, got "${raw}"`,
    );
  const [h, m, s, ms] = parts.slice(1).map((digits) => Number(digits ?? 0));
  const total = h! * 3600_000 + m! * 60_000 + s! * 1000 + ms!;
  if (total < SOURCE_EVERY.minMs || total > SOURCE_EVERY.maxMs)
    throw new UsageError(`--every must be ${bounds}, got "${raw}"`);
  return total;
}

/** 90000 -> `1m30s`, 1500 -> `1500ms`. */
export function formatDuration(ms: number): string {
  if (ms % 1000 !== 0) return `${ms}ms`;
  let s = ms / 1000;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  s %= 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

/** A time relative to now, for the table: `12s ago`, `in 3m`, `-`. */
export function relative(at: string | number | null, now: number): string {
  if (at === null) return '-';
  const d = (typeof at === 'number' ? at : Date.parse(at)) - now;
  const abs = Math.abs(d);
  const text =
    abs < 1000
      ? `${abs}ms`
      : abs < 120_000
        ? `${Math.round(abs / 1000)}s`
        : abs < 7_200_000
          ? `${Math.round(abs / 60_000)}m`
          : `${Math.round(abs / 3_600_000)}h`;
  return d < 0 ? `${text} ago` : `in ${text}`;
}

/** The JSON form of a source (`fns sources list --json`, `add`, `pause`, `resume`). */
function sourceJson(s: SourceRecord) {
  return {
    name: s.name,
    url: s.url,
    every_ms: s.everyMs,
    urgency: s.urgency,
    paused: s.paused,
    created_at: s.createdAt,
    last_poll_at: s.lastPollAt,
    last_status: s.lastStatus,
    last_error: s.lastError,
    next_poll_at: s.nextPollAt,
    failures: s.failures,
    min_interval_ms: s.minIntervalMs,
    items_seen: s.itemsSeen,
    items_ingested: s.itemsIngested,
    items_deduplicated: s.itemsDeduplicated,
  };
}

/** The human table of `fns sources list`; the last error in full on a line of its own under its source. */
export function sourcesTable(list: SourceRecord[], now: number): string {
  if (list.length === 0) return 'no sources yet (fns sources add <name> <url> adds one)';
  return table(
    ['NAME', 'STATE', 'EVERY', 'LAST POLL', 'HTTP', 'SEEN', 'INGESTED', 'DEDUP', 'NEXT POLL'],
    list.map((s) => ({
      cells: [
        s.name,
        s.paused ? 'paused' : s.failures > 0 ? `failing(${s.failures})` : 'active',
        formatDuration(s.everyMs),
        relative(s.lastPollAt, now),
        s.lastStatus === null ? '-' : String(s.lastStatus),
        String(s.itemsSeen),
        String(s.itemsIngested),
        String(s.itemsDeduplicated),
        s.paused ? '-' : s.nextPollAt === null ? 'now' : relative(s.nextPollAt, now),
      ],
      // The URL and the last error (a feed server's reason phrase, its text) escaped: one line each.
      details: [
        `  ${printable(s.url)}${s.urgency === 'auto' ? '' : `  (urgency ${s.urgency})`}`,
        ...(s.lastError ? [`  last error: ${printable(s.lastError)}`] : []),
      ],
    })),
  );
}

function noSource(name: string): CliError {
  return new CliError(`no source named "${name}" (fns sources list shows them)`);
}

export async function addSource({ args, option, config, print }: CommandRun): Promise<number> {
  // Validate everything before touching the store.
  const name = checkSourceName(args[0]!);
  const every = option('every');
  const add = {
    name,
    url: checkSourceUrl(args[1]!),
    everyMs: every === undefined ? SOURCE_EVERY.defaultMs : parseDuration(every),
    urgency: checkUrgency(option('urgency')),
  };
  const s = await withStore(config, async (store) => {
    try {
      return await store.sources.add(add, Date.now());
    } catch (e) {
      if (e instanceof SourceExistsError)
        throw new CliError(`a source named "${name}" already exists (fns sources remove ${name} first to replace it)`);
      throw e;
    }
  });
  print(
    sourceJson(s),
    `added ${s.name}: ${printable(s.url)}, every ${formatDuration(s.everyMs)}, urgency ${s.urgency}\n(a running fns serve or fns sources run polls it within a second)`,
  );
  return EXIT.ok;
}

export async function listSources({ config, print }: CommandRun): Promise<number> {
  const list = await withStore(config, (store) => store.sources.list());
  print({ sources: list.map(sourceJson) }, sourcesTable(list, Date.now()));
  return EXIT.ok;
}

async function setPaused({ args, config, print }: CommandRun, paused: boolean): Promise<number> {
  const name = checkSourceName(args[0]!);
  const s = await withStore(config, (store) => store.sources.setPaused(name, paused, Date.now()));
  if (!s) throw noSource(name);
  print(
    sourceJson(s),
    `${s.name}: ${s.paused ? 'paused (no more polls until fns sources resume)' : 'active (polled within a second)'}`,
  );
  return EXIT.ok;
}

export const pauseSource = (run: CommandRun) => setPaused(run, true);
export const resumeSource = (run: CommandRun) => setPaused(run, false);

export async function removeSource({ args, config, print }: CommandRun): Promise<number> {
  const name = checkSourceName(args[0]!);
  if (!(await withStore(config, (store) => store.sources.remove(name)))) throw noSource(name);
  print({ name, removed: true }, `${name}: removed (its articles stay in the archive)`);
  return EXIT.ok;
}

/** `fns sources run`: the poller alone, until SIGINT or SIGTERM. */
export async function runPoller({ config }: CommandRun): Promise<number> {
  const { SourcePoller, pollerUserAgent } = await import('../sources/poller.js');
  const store = await openStore(config, 'service');
  const poller = new SourcePoller({
    store: store.sources,
    userAgent: pollerUserAgent(config.brand),
    allowPrivate: config.feedAllowPrivate,
    // A poll's error and the poller's lines quote what a feed server answered: escaped, one line each.
    log: lineLog((m) => err(`fns: ${printable(m)}`)),
    onPoll: (r) => {
      if (r.outcome === 'error')
        out(
          `${printable(r.source)}: ${printable(String(r.error))}${r.status === null ? '' : ` (HTTP ${r.status})`}; next try ${new Date(r.nextPollAt).toISOString()}`,
        );
      else if (r.seen > 0)
        out(
          `${printable(r.source)}: ${r.seen} new item(s): ${r.ingested} stored, ${r.deduplicated} duplicate(s) of other articles${r.seen - r.ingested - r.deduplicated > 0 ? `, ${r.seen - r.ingested - r.deduplicated} without text (skipped)` : ''}`,
        );
    },
  });
  const sources = await store.sources.list();
  const active = sources.filter((s) => !s.paused).length;
  await poller.start();
  out(
    `fns: polling ${active} active source(s) of ${sources.length} (lease owner ${poller.owner}); registry changes are picked up within a second. Ctrl+C to stop.`,
  );
  // The poller's timers do not hold the process open (they must not in fns serve); this does, until a signal.
  const keepAlive = setInterval(() => {}, 3600_000);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  clearInterval(keepAlive);
  out('fns: stopping: abandoning the polls in flight');
  await poller.stop();
  await store.close();
  out('fns: stopped');
  return EXIT.ok;
}

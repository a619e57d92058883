/** The status rules, pure (the clock is a parameter); openapi.yaml (getServiceStatus) states them for the reader. */
import type { components } from '../../generated/openapi.js';
import type { IncidentRecord, SourceRecord, StatusCause } from '../store/ports/index.js';

export type StatusReport = components['schemas']['StatusReport'];
export type StatusState = components['schemas']['StatusState'];
export type ComponentId = components['schemas']['StatusComponent']['id'];
export type SourceStatus = components['schemas']['SourceStatus'];
export type Percentiles = components['schemas']['Percentiles'];

export const COMPONENT_NAMES: Record<ComponentId, string> = {
  rest: 'REST API',
  stream: 'Stream',
  webhooks: 'Webhooks',
  search: 'Search',
};

export const MINUTE_MS = 60_000;
const DAY_MINUTES = 1440;
export const DAY_MS = DAY_MINUTES * MINUTE_MS;
export const HISTORY_DAYS = 90;
/** Server errors above this share of the REST answers of the last 5 minutes degrade REST. */
const SERVER_ERROR_SHARE = 0.01;
/** Fewer answers than this in 5 minutes never degrade REST by their errors (one 500 of three is noise). */
const SERVER_ERROR_MIN_ANSWERS = 20;
/** A poll this late degrades its source before it fails (a source that never answers fails at the poll timeout). */
const POLL_OVERDUE_MS = 10_000;
/** An instance's search index still loading this long after its start degrades search. */
export const INDEX_LOAD_GRACE_MS = 60_000;
/** The page's reload period: follows an incident without interrupting a (screen) reader every few seconds. */
export const PAGE_REFRESH_SECONDS = 60;
/** An ingest → stream delay p99 over this (last 5 minutes) degrades the stream. */
const SLOW_DELIVERY_MS = 5_000;

/** What the instances report now, merged: the inputs of the component rules. */
export interface LiveState {
  databaseFailing: boolean;
  embedderFailing: boolean;
  /** Some running instance's search index is still loading. */
  indexLoading: boolean;
  restAnswers: number;
  restServerErrors: number;
  /** Ingest → stream delay p99 of the last 5 minutes (ms), null without deliveries. */
  delayP99Ms: number | null;
}

/** Each component's cause of degradation, or null when it is operational. */
export function componentCauses(live: LiveState): Record<ComponentId, StatusCause | null> {
  const database: StatusCause | null = live.databaseFailing ? 'database_unavailable' : null;
  const serverErrors =
    live.restAnswers >= SERVER_ERROR_MIN_ANSWERS && live.restServerErrors / live.restAnswers > SERVER_ERROR_SHARE;
  const slow = live.delayP99Ms !== null && live.delayP99Ms > SLOW_DELIVERY_MS;
  return {
    rest: database ?? (serverErrors ? 'server_errors' : null),
    stream: database ?? (slow ? 'slow_delivery' : null),
    webhooks: database,
    // Search reads the ranked articles from the store too.
    search: database ?? (live.indexLoading ? 'index_loading' : live.embedderFailing ? 'embedder_unavailable' : null),
  };
}

/** A failed poll's cause class, from its `<kind>: <message>` (src/sources/poll-record.ts); the message never leaves. */
export function pollFailureCause(error: string): StatusCause {
  const kind = error.split(':')[0]!;
  if (kind === 'http') return 'source_error_status';
  if (kind === 'parse' || kind === 'charset' || kind === 'too-large') return 'source_unreadable';
  if (kind === 'store') return 'database_unavailable';
  if (kind === 'internal') return 'server_errors';
  return 'source_unreachable';
}

export const iso = (ms: number): string => new Date(ms).toISOString();
/** The epoch minute of an instant. */
export const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS);

/**
 * A source as the page shows it, never its address or error text. Overdue counts from the later of its next poll
 * and `pollingSince`: after a restart every stored poll time is past, and the poller takes them up at once.
 */
export function sourceStatus(s: SourceRecord, now: number, pollingSince = -Infinity): SourceStatus {
  const failing = !s.paused && s.failingSince !== null && s.lastError !== null;
  const due = s.nextPollAt === null ? null : Math.max(Date.parse(s.nextPollAt), pollingSince);
  const overdue = !s.paused && due !== null && now - due > POLL_OVERDUE_MS;
  return {
    name: s.name,
    state: s.paused ? 'paused' : failing || overdue ? 'degraded' : 'operational',
    cause: failing ? pollFailureCause(s.lastError!) : overdue ? 'source_overdue' : null,
    last_article_at: s.lastArticleAt,
    last_poll_ok_at: s.lastOkAt,
    failing_since: s.paused ? null : s.failingSince,
    poll_interval_seconds: Math.max(1, Math.min(86_400, Math.round(s.everyMs / 1000))),
  };
}

/** `outage` when the database fails or every polled source does; `degraded` when anything is; else `operational`. */
export function overallState(
  causes: Record<ComponentId, StatusCause | null>,
  sources: readonly SourceStatus[],
): StatusState {
  const polled = sources.filter((s) => s.state !== 'paused');
  const allSourcesFail = polled.length > 0 && polled.every((s) => s.state === 'degraded');
  if (causes.rest === 'database_unavailable' || allSourcesFail) return 'outage';
  const anyDegraded = Object.values(causes).some((c) => c !== null) || polled.some((s) => s.state === 'degraded');
  return anyDegraded ? 'degraded' : 'operational';
}

/** The `q` quantile: the upper bound of its bucket (the last bound for the overflow count); null with no data. */
export function quantile(counts: readonly number[], bounds: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return bounds[Math.min(i, bounds.length - 1)]!;
  }
  return bounds[bounds.length - 1]!;
}

export function percentiles(counts: readonly number[], bounds: readonly number[]): Percentiles {
  return { p50: quantile(counts, bounds, 0.5), p99: quantile(counts, bounds, 0.99) };
}

/** The UTC day (epoch days) of an instant. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** Minutes of [from, to) covered by the automatic incidents given (overlaps counted once). */
function incidentMinutes(incidents: readonly IncidentRecord[], from: number, to: number, now: number): number {
  const spans = incidents
    .map((i) => [Math.max(from, i.startedAt), Math.min(to, i.endedAt ?? now)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let end = from;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    covered += b - Math.max(a, end);
    end = b;
  }
  return covered / MINUTE_MS;
}

/**
 * One component's last 90 UTC days, oldest first: the operational share of each day's elapsed minutes (recorded
 * ones on the first recorded day); a minute no instance recorded is not operational; null before that day.
 */
export function historyDays(
  recorded: ReadonlyMap<number, number>,
  incidents: readonly IncidentRecord[],
  now: number,
): { first_day: string; operational: (number | null)[] } {
  const today = dayOf(now);
  const firstRecorded = Math.min(...recorded.keys());
  const firstDay = today - HISTORY_DAYS + 1;
  const operational: (number | null)[] = [];
  for (let day = firstDay; day <= today; day++) {
    if (!(day >= firstRecorded)) {
      operational.push(null);
      continue;
    }
    const start = day * DAY_MS;
    const end = Math.min(now, start + DAY_MS);
    const ran = recorded.get(day) ?? 0;
    const minutes = day === firstRecorded ? Math.max(1, ran) : Math.max(1, (end - start) / MINUTE_MS);
    // An incident's minutes while no instance ran are counted once (as not run).
    const up = Math.min(ran, minutes - incidentMinutes(incidents, start, end, now));
    operational.push(Math.round(Math.max(0, Math.min(1, up / minutes)) * 10_000) / 10_000);
  }
  return { first_day: iso(firstDay * DAY_MS).slice(0, 10), operational };
}

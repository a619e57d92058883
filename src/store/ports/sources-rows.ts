/** The source registry's row shape (both engines: times as epoch ms) and its mapping to SourceRecord. */
import type { CarrierRecord, DuplicateReason, ItemRecord, PollOutcome, SourceRecord, UrgencySetting } from './index.js';

export interface SourceRow {
  name: string;
  url: string;
  every_ms: number | string;
  urgency: string;
  paused: number | boolean;
  created_at: number | string;
  etag: string | null;
  last_modified: string | null;
  last_poll_at: number | string | null;
  last_ok_at: number | string | null;
  failing_since: number | string | null;
  last_article_at: number | string | null;
  last_status: number | null;
  last_error: string | null;
  next_poll_at: number | string | null;
  failures: number;
  min_interval_ms: number | string | null;
  items_seen: number | string;
  items_ingested: number | string;
  items_deduplicated: number | string;
}

/** Columns of SourceRow, for SELECT and RETURNING lists. */
export const SOURCE_COLUMNS =
  'name, url, every_ms, urgency, paused, created_at, etag, last_modified, last_poll_at, last_ok_at, failing_since, last_article_at, last_status, last_error, next_poll_at, failures, min_interval_ms, items_seen, items_ingested, items_deduplicated';

const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
const num = (v: number | string | null) => (v === null ? null : Number(v));

export function toSource(r: SourceRow): SourceRecord {
  return {
    name: r.name,
    url: r.url,
    everyMs: Number(r.every_ms),
    urgency: r.urgency as UrgencySetting,
    paused: r.paused === true || r.paused === 1,
    createdAt: iso(r.created_at)!,
    etag: r.etag,
    lastModified: r.last_modified,
    lastPollAt: iso(r.last_poll_at),
    lastOkAt: iso(r.last_ok_at),
    failingSince: iso(r.failing_since),
    lastArticleAt: iso(r.last_article_at),
    lastStatus: r.last_status,
    lastError: r.last_error,
    nextPollAt: iso(r.next_poll_at),
    failures: r.failures,
    minIntervalMs: num(r.min_interval_ms),
    itemsSeen: Number(r.items_seen),
    itemsIngested: Number(r.items_ingested),
    itemsDeduplicated: Number(r.items_deduplicated),
  };
}

export interface CarrierRow {
  source: string;
  url: string | null;
  at: number | string;
  reason: string | null;
}

export const toCarrier = (r: CarrierRow): CarrierRecord => ({
  source: r.source,
  url: r.url,
  at: iso(r.at)!,
  reason: r.reason as DuplicateReason | null,
});

export interface ItemRow {
  source: string;
  external_id: string;
  canonical_url: string | null;
  seen_at: number | string;
  reason: string | null;
}

export const toItem = (r: ItemRow): ItemRecord => ({
  source: r.source,
  externalId: r.external_id,
  url: r.canonical_url,
  seenAt: iso(r.seen_at)!,
  reason: r.reason as DuplicateReason | null,
});

/** Whatever a feed said is stored within these: every value fits the columns; SQLite never gets a float like 6e+24. */
const POLL_RECORD_BOUNDS = {
  /** Times (epoch ms): at most the last time a JavaScript Date can show. */
  timeMaxMs: 8_640_000_000_000_000,
  /** A source's own minimum interval (its feed's ttl floor): at most 24 h, the longest interval of a source. */
  minIntervalMaxMs: 24 * 3600_000,
  /** Failures in a row (PostgreSQL integer). */
  failuresMax: 2_147_483_647,
  /** An HTTP status is a three-digit number; anything else is stored as none. */
  statusMin: 100,
  statusMax: 999,
  /** The error text of the record, in characters. */
  errorMaxLength: 2000,
} as const;

const intWithin = (v: number, min: number, max: number, otherwise: number): number =>
  Number.isNaN(v) ? otherwise : Math.min(max, Math.max(min, Math.round(v)));

/** `o` with every number within POLL_RECORD_BOUNDS (a count: a safe integer, at least 0), as the adapters store it. */
export function boundedPollOutcome(o: PollOutcome): PollOutcome {
  const b = POLL_RECORD_BOUNDS;
  const at = intWithin(o.at, 0, b.timeMaxMs, 0);
  const count = (n: number) => intWithin(n, 0, Number.MAX_SAFE_INTEGER, 0);
  return {
    ...o,
    at,
    status:
      o.status === null || Number.isNaN(o.status) || o.status < b.statusMin || o.status > b.statusMax
        ? null
        : Math.trunc(o.status),
    error:
      o.error === null || o.error.length <= b.errorMaxLength
        ? o.error
        : `${o.error.slice(0, b.errorMaxLength - 1).replace(/[\uD800-\uDBFF]$/, '')}…`,
    // An unreadable next time is now: the source is due, not lost.
    nextPollAt: intWithin(o.nextPollAt, 0, b.timeMaxMs, at),
    failures: intWithin(o.failures, 0, b.failuresMax, 0),
    minIntervalMs:
      o.minIntervalMs === null || Number.isNaN(o.minIntervalMs) || o.minIntervalMs <= 0
        ? null
        : intWithin(o.minIntervalMs, 0, b.minIntervalMaxMs, 0),
    seen: count(o.seen),
    ingested: count(o.ingested),
    deduplicated: count(o.deduplicated),
  };
}

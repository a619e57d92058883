/** The source registry's row shape (both engines: times as epoch ms) and its mapping to SourceRecord. */
import type { SourceRecord, UrgencySetting } from './index.js';

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
  'name, url, every_ms, urgency, paused, created_at, etag, last_modified, last_poll_at, last_status, last_error, next_poll_at, failures, min_interval_ms, items_seen, items_ingested, items_deduplicated';

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

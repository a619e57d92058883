/** The status tables' row shapes (both engines: times as epoch ms) and their mapping to the port's records. */
import type { IncidentRecord, StatusCause } from './index.js';

export interface IncidentRow {
  id: number | string;
  component: string;
  kind: string;
  cause: string;
  message: string | null;
  started_at: number | string;
  ended_at: number | string | null;
}

/** Columns of IncidentRow, for SELECT and RETURNING lists. */
export const INCIDENT_COLUMNS = 'id, component, kind, cause, message, started_at, ended_at';

export function toIncident(r: IncidentRow): IncidentRecord {
  return {
    id: Number(r.id),
    component: r.component,
    kind: r.kind as IncidentRecord['kind'],
    cause: r.cause as StatusCause,
    message: r.message,
    startedAt: Number(r.started_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
  };
}

/** The incidents' order: newest start first, the higher id first on a tie. */
export const byNewestStart = (a: IncidentRecord, b: IncidentRecord): number => b.startedAt - a.startedAt || b.id - a.id;

/** A time or a minute as the integer the tables hold (PostgreSQL's bigint refuses a fraction). */
export const whole = (n: number): number => Math.trunc(n);

/** The least integer at or above `n`: an integer column is `>= n` (or `< n`) exactly when it is against this. */
export const bound = (n: number): number => Math.ceil(n);

/** The id `resolve` ends (null: every open note); an id no incident has (none is 0) matches none. */
export const noteId = (id: number | undefined): number | null =>
  id === undefined ? null : Number.isSafeInteger(id) ? id : 0;

/** The first epoch minute whose start is at or after `ms`: minutes before it start before `ms`. */
export const firstMinuteFrom = (ms: number): number => Math.ceil(ms / 60_000);

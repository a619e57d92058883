/** One open automatic incident per component (partial unique index); the report is compare-and-set on its time. */
import type { IncidentRecord, StatusCause, StatusStore } from '../ports/index.js';
import {
  bound,
  byNewestStart,
  firstMinuteFrom,
  INCIDENT_COLUMNS,
  noteId,
  toIncident,
  whole,
  type IncidentRow,
} from '../ports/status-rows.js';
import type { Db } from './db.js';

/** Source health columns (backfilled from the last poll) and the status tables. Idempotent. */
export const STATUS_MIGRATION = `
  ALTER TABLE sources ADD COLUMN IF NOT EXISTS last_ok_at bigint,
    ADD COLUMN IF NOT EXISTS failing_since bigint,
    ADD COLUMN IF NOT EXISTS last_article_at bigint;
  UPDATE sources SET last_ok_at = last_poll_at WHERE last_ok_at IS NULL AND last_error IS NULL AND last_poll_at IS NOT NULL;
  UPDATE sources SET failing_since = last_poll_at WHERE failing_since IS NULL AND last_error IS NOT NULL;
  CREATE TABLE IF NOT EXISTS status_minutes (minute bigint PRIMARY KEY);
  CREATE TABLE IF NOT EXISTS status_samples (
    minute bigint NOT NULL,
    instance text COLLATE "C" NOT NULL,
    sample text NOT NULL,
    PRIMARY KEY (minute, instance)
  );
  CREATE TABLE IF NOT EXISTS status_incidents (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    component text COLLATE "C" NOT NULL,
    kind text NOT NULL CHECK (kind IN ('automatic', 'note')),
    cause text NOT NULL,
    message text,
    started_at bigint NOT NULL,
    ended_at bigint
  );
  CREATE UNIQUE INDEX IF NOT EXISTS status_incidents_open ON status_incidents(component)
    WHERE kind = 'automatic' AND ended_at IS NULL;
  CREATE INDEX IF NOT EXISTS status_incidents_ended ON status_incidents(ended_at);
  CREATE TABLE IF NOT EXISTS status_report (
    id integer PRIMARY KEY CHECK (id = 1),
    generated_at bigint NOT NULL,
    body text NOT NULL
  );`;

export class PgStatus implements StatusStore {
  constructor(private readonly db: Db) {}

  async markMinute(minute: number): Promise<void> {
    await this.db.query('INSERT INTO status_minutes (minute) VALUES ($1) ON CONFLICT (minute) DO NOTHING', [
      whole(minute),
    ]);
  }

  async minutesByDay(sinceDay: number): Promise<{ day: number; minutes: number }[]> {
    const rows = await this.db.query<{ day: string; minutes: string }>(
      `SELECT minute / 1440 AS day, count(*) AS minutes FROM status_minutes WHERE minute >= $1::bigint * 1440
       GROUP BY 1 ORDER BY 1`,
      [bound(sinceDay)],
    );
    return rows.map((r) => ({ day: Number(r.day), minutes: Number(r.minutes) }));
  }

  async putSample(instance: string, minute: number, sample: string): Promise<void> {
    await this.db.query(
      `INSERT INTO status_samples (minute, instance, sample) VALUES ($1, $2, $3)
       ON CONFLICT (minute, instance) DO UPDATE SET sample = excluded.sample`,
      [whole(minute), instance, sample],
    );
  }

  async samples(sinceMinute: number): Promise<{ instance: string; minute: number; sample: string }[]> {
    const rows = await this.db.query<{ instance: string; minute: string; sample: string }>(
      'SELECT instance, minute, sample FROM status_samples WHERE minute >= $1 ORDER BY minute, instance',
      [bound(sinceMinute)],
    );
    return rows.map((r) => ({ instance: r.instance, minute: Number(r.minute), sample: r.sample }));
  }

  async open(component: string, cause: StatusCause, at: number): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO status_incidents (component, kind, cause, started_at) VALUES ($1, 'automatic', $2, $3)
       ON CONFLICT (component) WHERE kind = 'automatic' AND ended_at IS NULL DO NOTHING RETURNING id`,
      [component, cause, whole(at)],
    );
    return rows.length > 0;
  }

  async close(component: string, at: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE status_incidents SET ended_at = $2 WHERE component = $1 AND kind = 'automatic' AND ended_at IS NULL
       RETURNING id`,
      [component, whole(at)],
    );
    return rows.length > 0;
  }

  async note(component: string, message: string, at: number): Promise<IncidentRecord> {
    const rows = await this.db.query<IncidentRow>(
      `INSERT INTO status_incidents (component, kind, cause, message, started_at) VALUES ($1, 'note', 'operator_note', $2, $3)
       RETURNING ${INCIDENT_COLUMNS}`,
      [component, message, whole(at)],
    );
    return toIncident(rows[0]!);
  }

  async resolve(at: number, id?: number): Promise<IncidentRecord[]> {
    const rows = await this.db.query<IncidentRow>(
      `UPDATE status_incidents SET ended_at = $1
       WHERE kind = 'note' AND ended_at IS NULL AND ($2::bigint IS NULL OR id = $2::bigint)
       RETURNING ${INCIDENT_COLUMNS}`,
      [whole(at), noteId(id)],
    );
    return rows.map(toIncident).sort(byNewestStart);
  }

  async incidents(sinceMs: number): Promise<IncidentRecord[]> {
    const rows = await this.db.query<IncidentRow>(
      `SELECT ${INCIDENT_COLUMNS} FROM status_incidents WHERE ended_at IS NULL OR ended_at >= $1
       ORDER BY started_at DESC, id DESC`,
      [bound(sinceMs)],
    );
    return rows.map(toIncident);
  }

  async report(): Promise<{ generatedAt: number; body: string } | undefined> {
    const rows = await this.db.query<{ generated_at: string; body: string }>(
      'SELECT generated_at, body FROM status_report WHERE id = 1',
    );
    return rows[0] && { generatedAt: Number(rows[0].generated_at), body: rows[0].body };
  }

  async publish(body: string, generatedAt: number, previous: number | null): Promise<boolean> {
    const rows =
      previous === null
        ? await this.db.query(
            'INSERT INTO status_report (id, generated_at, body) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
            [whole(generatedAt), body],
          )
        : await this.db.query(
            'UPDATE status_report SET generated_at = $1, body = $2 WHERE id = 1 AND generated_at = $3 RETURNING id',
            [whole(generatedAt), body, whole(previous)],
          );
    return rows.length > 0;
  }

  async prune(beforeMs: number, samplesBeforeMs: number): Promise<void> {
    const minute = firstMinuteFrom(beforeMs);
    await this.db.tx(async (db) => {
      await db.query('DELETE FROM status_minutes WHERE minute < $1', [minute]);
      await db.query('DELETE FROM status_samples WHERE minute < $1', [firstMinuteFrom(samplesBeforeMs)]);
      await db.query('DELETE FROM status_incidents WHERE ended_at < $1', [bound(beforeMs)]);
    });
  }
}

/** One open automatic incident per component (partial unique index); the report is compare-and-set on its time. */
import type Database from 'better-sqlite3';
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

/** The status tables (part of the status migration, migrations.ts). Idempotent: safe to apply again. */
export const STATUS_TABLES = `
  CREATE TABLE IF NOT EXISTS status_minutes (minute INTEGER PRIMARY KEY);
  CREATE TABLE IF NOT EXISTS status_samples (
    minute INTEGER NOT NULL,
    instance TEXT NOT NULL,
    sample TEXT NOT NULL,
    PRIMARY KEY (minute, instance)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS status_incidents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    component TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('automatic', 'note')),
    cause TEXT NOT NULL,
    message TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER
  );
  CREATE UNIQUE INDEX IF NOT EXISTS status_incidents_open ON status_incidents(component)
    WHERE kind = 'automatic' AND ended_at IS NULL;
  CREATE INDEX IF NOT EXISTS status_incidents_ended ON status_incidents(ended_at);
  CREATE TABLE IF NOT EXISTS status_report (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generated_at INTEGER NOT NULL,
    body TEXT NOT NULL
  );`;

export class SqliteStatus implements StatusStore {
  private readonly st;

  constructor(private readonly db: Database.Database) {
    this.st = {
      mark: db.prepare('INSERT INTO status_minutes (minute) VALUES (?) ON CONFLICT (minute) DO NOTHING'),
      byDay: db.prepare<[number], { day: number; minutes: number }>(
        'SELECT minute / 1440 AS day, count(*) AS minutes FROM status_minutes WHERE minute >= ? GROUP BY day ORDER BY day',
      ),
      putSample: db.prepare(
        `INSERT INTO status_samples (minute, instance, sample) VALUES (?, ?, ?)
         ON CONFLICT (minute, instance) DO UPDATE SET sample = excluded.sample`,
      ),
      samples: db.prepare<[number], { instance: string; minute: number; sample: string }>(
        'SELECT instance, minute, sample FROM status_samples WHERE minute >= ? ORDER BY minute, instance',
      ),
      open: db.prepare(
        `INSERT INTO status_incidents (component, kind, cause, started_at) VALUES (?, 'automatic', ?, ?)
         ON CONFLICT (component) WHERE kind = 'automatic' AND ended_at IS NULL DO NOTHING`,
      ),
      close: db.prepare(
        `UPDATE status_incidents SET ended_at = ? WHERE component = ? AND kind = 'automatic' AND ended_at IS NULL`,
      ),
      note: db.prepare<[string, string, number], IncidentRow>(
        `INSERT INTO status_incidents (component, kind, cause, message, started_at) VALUES (?, 'note', 'operator_note', ?, ?)
         RETURNING ${INCIDENT_COLUMNS}`,
      ),
      resolve: db.prepare<[number, number | null, number | null], IncidentRow>(
        `UPDATE status_incidents SET ended_at = ? WHERE kind = 'note' AND ended_at IS NULL AND (? IS NULL OR id = ?)
         RETURNING ${INCIDENT_COLUMNS}`,
      ),
      incidents: db.prepare<[number], IncidentRow>(
        `SELECT ${INCIDENT_COLUMNS} FROM status_incidents WHERE ended_at IS NULL OR ended_at >= ?
         ORDER BY started_at DESC, id DESC`,
      ),
      report: db.prepare<[], { generated_at: number; body: string }>(
        'SELECT generated_at, body FROM status_report WHERE id = 1',
      ),
      publishFirst: db.prepare(
        'INSERT INTO status_report (id, generated_at, body) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING',
      ),
      publishOver: db.prepare('UPDATE status_report SET generated_at = ?, body = ? WHERE id = 1 AND generated_at = ?'),
      pruneMinutes: db.prepare('DELETE FROM status_minutes WHERE minute < ?'),
      pruneSamples: db.prepare('DELETE FROM status_samples WHERE minute < ?'),
      pruneIncidents: db.prepare('DELETE FROM status_incidents WHERE ended_at < ?'),
    };
  }

  async markMinute(minute: number): Promise<void> {
    this.st.mark.run(whole(minute));
  }

  async minutesByDay(sinceDay: number): Promise<{ day: number; minutes: number }[]> {
    return this.st.byDay.all(bound(sinceDay) * 1440);
  }

  async putSample(instance: string, minute: number, sample: string): Promise<void> {
    this.st.putSample.run(whole(minute), instance, sample);
  }

  async samples(sinceMinute: number): Promise<{ instance: string; minute: number; sample: string }[]> {
    return this.st.samples.all(bound(sinceMinute));
  }

  async open(component: string, cause: StatusCause, at: number): Promise<boolean> {
    return this.st.open.run(component, cause, whole(at)).changes > 0;
  }

  async close(component: string, at: number): Promise<boolean> {
    return this.st.close.run(whole(at), component).changes > 0;
  }

  async note(component: string, message: string, at: number): Promise<IncidentRecord> {
    return toIncident(this.st.note.get(component, message, whole(at))!);
  }

  async resolve(at: number, id?: number): Promise<IncidentRecord[]> {
    const which = noteId(id);
    return this.st.resolve.all(whole(at), which, which).map(toIncident).sort(byNewestStart);
  }

  async incidents(sinceMs: number): Promise<IncidentRecord[]> {
    return this.st.incidents.all(bound(sinceMs)).map(toIncident);
  }

  async report(): Promise<{ generatedAt: number; body: string } | undefined> {
    const r = this.st.report.get();
    return r && { generatedAt: Number(r.generated_at), body: r.body };
  }

  async publish(body: string, generatedAt: number, previous: number | null): Promise<boolean> {
    const r =
      previous === null
        ? this.st.publishFirst.run(whole(generatedAt), body)
        : this.st.publishOver.run(whole(generatedAt), body, whole(previous));
    return r.changes > 0;
  }

  async prune(beforeMs: number, samplesBeforeMs: number): Promise<void> {
    const minute = firstMinuteFrom(beforeMs);
    this.db
      .transaction(() => {
        this.st.pruneMinutes.run(minute);
        this.st.pruneSamples.run(firstMinuteFrom(samplesBeforeMs));
        this.st.pruneIncidents.run(bound(beforeMs));
      })
      .immediate();
  }
}

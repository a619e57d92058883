/** Leases keep a second process (`fns webhooks send-test`) off the service's endpoints; writes are IMMEDIATE. */
import type Database from 'better-sqlite3';
import type { NewWebhook, WebhookAttempt, WebhookEndpoint, WebhookState, WebhookStore } from '../ports/index.js';
import {
  newWebhookValues,
  rotatedSecrets,
  toWebhook,
  WEBHOOK_COLUMNS,
  type WebhookRow,
} from '../ports/webhook-rows.js';

export const WEBHOOKS_MIGRATION = `
  CREATE TABLE webhook_endpoints (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    url TEXT NOT NULL,
    tickers TEXT,
    secrets TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'active',
    paused_reason TEXT,
    cursor INTEGER NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    first_failure_at INTEGER,
    next_attempt_at INTEGER,
    last_attempt_at INTEGER,
    last_success_at INTEGER,
    last_status INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, n);`;

export class SqliteWebhooks implements WebhookStore {
  private readonly st;

  constructor(private readonly db: Database.Database) {
    this.st = {
      insert: db.prepare(
        `INSERT INTO webhook_endpoints (id, account_id, url, tickers, min_relevance, secrets, cursor, created_at)
         VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) FROM articles), ?)`,
      ),
      get: db.prepare<[string], WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhook_endpoints WHERE id = ?`),
      list: db.prepare<[], WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhook_endpoints ORDER BY n`),
      listOf: db.prepare<[string], WebhookRow>(
        `SELECT ${WEBHOOK_COLUMNS} FROM webhook_endpoints WHERE account_id = ? ORDER BY n`,
      ),
      remove: db.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
      pause: db.prepare('UPDATE webhook_endpoints SET state = ?, paused_reason = ? WHERE id = ?'),
      resume: db.prepare(
        `UPDATE webhook_endpoints SET state = 'active', paused_reason = NULL, failures = 0, first_failure_at = NULL, next_attempt_at = NULL WHERE id = ?`,
      ),
      secrets: db.prepare('UPDATE webhook_endpoints SET secrets = ? WHERE id = ?'),
      claimable: db.prepare<[number, string, number], { id: string }>(
        `SELECT id FROM webhook_endpoints WHERE state = 'active' AND (lease_until IS NULL OR lease_until <= ? OR lease_owner = ?) ORDER BY n LIMIT ?`,
      ),
      lease: db.prepare('UPDATE webhook_endpoints SET lease_owner = ?, lease_until = ? WHERE id = ?'),
      release: db.prepare('UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?'),
      record: db.prepare(
        `UPDATE webhook_endpoints SET
           cursor = max(cursor, coalesce(@cursor, cursor)),
           last_attempt_at = CASE WHEN @status IS NULL AND @error IS NULL THEN last_attempt_at ELSE @at END,
           last_success_at = CASE WHEN @ok = 1 THEN @at ELSE last_success_at END,
           last_status = CASE WHEN @status IS NULL AND @error IS NULL THEN last_status ELSE @status END,
           last_error = CASE WHEN @ok = 0 THEN @error ELSE last_error END,
           failures = @failures, first_failure_at = @firstFailureAt, next_attempt_at = @nextAttemptAt,
           state = CASE WHEN state = 'active' THEN @state ELSE state END,
           paused_reason = CASE WHEN state = 'active' THEN @pausedReason ELSE paused_reason END
         WHERE id = @id AND lease_owner = @owner`,
      ),
    };
  }

  async add(e: NewWebhook, now: number): Promise<WebhookEndpoint> {
    this.db.transaction(() => this.st.insert.run(...newWebhookValues(e, now))).immediate();
    return (await this.get(e.id))!;
  }

  async get(id: string): Promise<WebhookEndpoint | undefined> {
    const r = this.st.get.get(id);
    return r && toWebhook(r);
  }

  async list(accountId?: string): Promise<WebhookEndpoint[]> {
    return (accountId === undefined ? this.st.list.all() : this.st.listOf.all(accountId)).map(toWebhook);
  }

  async remove(id: string): Promise<boolean> {
    return this.st.remove.run(id).changes > 0;
  }

  async setState(
    id: string,
    state: WebhookState,
    reason: string | null,
    _now: number,
  ): Promise<WebhookEndpoint | undefined> {
    if (state === 'active') this.st.resume.run(id);
    else this.st.pause.run(state, reason, id);
    return this.get(id);
  }

  async rotateSecret(id: string, secret: string, now: number, overlapMs: number): Promise<WebhookEndpoint | undefined> {
    this.db
      .transaction(() => {
        const r = this.st.get.get(id);
        if (r) this.st.secrets.run(rotatedSecrets(r.secrets, secret, now, overlapMs), id);
      })
      .immediate();
    return this.get(id);
  }

  async claim(owner: string, now: number, leaseMs: number, limit: number): Promise<WebhookEndpoint[]> {
    const ids = this.db
      .transaction(() => {
        const rows = this.st.claimable.all(now, owner, Math.max(0, Math.trunc(limit)));
        for (const r of rows) this.st.lease.run(owner, now + leaseMs, r.id);
        return rows.map((r) => r.id);
      })
      .immediate();
    return ids.flatMap((id) => {
      const r = this.st.get.get(id);
      return r ? [toWebhook(r)] : [];
    });
  }

  async release(owner: string): Promise<void> {
    this.st.release.run(owner);
  }

  async recordAttempt(id: string, owner: string, a: WebhookAttempt): Promise<boolean> {
    const ok = a.ok === null ? null : a.ok ? 1 : 0;
    return this.st.record.run({ ...a, id, owner, ok }).changes > 0;
  }
}

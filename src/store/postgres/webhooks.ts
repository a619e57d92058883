/** One instance delivers an endpoint at a time; a lease not renewed expires and another instance takes over. */
import type { NewWebhook, WebhookAttempt, WebhookEndpoint, WebhookState, WebhookStore } from '../ports/index.js';
import {
  newWebhookValues,
  rotatedSecrets,
  toWebhook,
  WEBHOOK_COLUMNS,
  type WebhookRow,
} from '../ports/webhook-rows.js';
import type { Db } from './db.js';

export const WEBHOOKS_MIGRATION = `
  CREATE TABLE webhook_endpoints (
    n bigserial UNIQUE,
    id text COLLATE "C" PRIMARY KEY,
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    url text NOT NULL,
    tickers text,
    secrets text NOT NULL,
    state text NOT NULL DEFAULT 'active',
    paused_reason text,
    cursor bigint NOT NULL,
    failures integer NOT NULL DEFAULT 0,
    first_failure_at bigint,
    next_attempt_at bigint,
    last_attempt_at bigint,
    last_success_at bigint,
    last_status integer,
    last_error text,
    created_at bigint NOT NULL,
    lease_owner text,
    lease_until bigint
  );
  CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, n);`;

export class PgWebhooks implements WebhookStore {
  constructor(private readonly db: Db) {}

  async add(e: NewWebhook, now: number): Promise<WebhookEndpoint> {
    const rows = await this.db.query<WebhookRow>(
      `INSERT INTO webhook_endpoints (id, account_id, url, tickers, min_relevance, secrets, cursor, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, (SELECT coalesce(max(seq), 0) FROM articles), $7) RETURNING ${WEBHOOK_COLUMNS}`,
      newWebhookValues(e, now),
    );
    return toWebhook(rows[0]!);
  }

  async get(id: string): Promise<WebhookEndpoint | undefined> {
    const rows = await this.db.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [
      id,
    ]);
    return rows[0] && toWebhook(rows[0]);
  }

  async list(accountId?: string): Promise<WebhookEndpoint[]> {
    const rows =
      accountId === undefined
        ? await this.db.query<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhook_endpoints ORDER BY n`)
        : await this.db.query<WebhookRow>(
            `SELECT ${WEBHOOK_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 ORDER BY n`,
            [accountId],
          );
    return rows.map(toWebhook);
  }

  async remove(id: string): Promise<boolean> {
    return (await this.db.query('DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id', [id])).length > 0;
  }

  async setState(
    id: string,
    state: WebhookState,
    reason: string | null,
    _now: number,
  ): Promise<WebhookEndpoint | undefined> {
    const rows =
      state === 'active'
        ? await this.db.query<WebhookRow>(
            `UPDATE webhook_endpoints SET state = 'active', paused_reason = NULL, failures = 0, first_failure_at = NULL, next_attempt_at = NULL
             WHERE id = $1 RETURNING ${WEBHOOK_COLUMNS}`,
            [id],
          )
        : await this.db.query<WebhookRow>(
            `UPDATE webhook_endpoints SET state = $2, paused_reason = $3 WHERE id = $1 RETURNING ${WEBHOOK_COLUMNS}`,
            [id, state, reason],
          );
    return rows[0] && toWebhook(rows[0]);
  }

  async rotateSecret(id: string, secret: string, now: number, overlapMs: number): Promise<WebhookEndpoint | undefined> {
    return this.db.tx(async (db) => {
      const cur = await db.query<{ secrets: string }>(
        'SELECT secrets FROM webhook_endpoints WHERE id = $1 FOR UPDATE',
        [id],
      );
      if (!cur[0]) return undefined;
      const rows = await db.query<WebhookRow>(
        `UPDATE webhook_endpoints SET secrets = $2 WHERE id = $1 RETURNING ${WEBHOOK_COLUMNS}`,
        [id, rotatedSecrets(cur[0].secrets, secret, now, overlapMs)],
      );
      return toWebhook(rows[0]!);
    });
  }

  async claim(owner: string, now: number, leaseMs: number, limit: number): Promise<WebhookEndpoint[]> {
    const rows = await this.db.query<WebhookRow & { n: string }>(
      `WITH due AS (
         SELECT id FROM webhook_endpoints
         WHERE state = 'active' AND (lease_until IS NULL OR lease_until <= $1 OR lease_owner = $2)
         ORDER BY n LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       UPDATE webhook_endpoints w SET lease_owner = $2, lease_until = $1::bigint + $4::bigint FROM due WHERE w.id = due.id
       RETURNING w.n, ${WEBHOOK_COLUMNS.split(', ')
         .map((c) => `w.${c}`)
         .join(', ')}`,
      [now, owner, Math.max(0, Math.trunc(limit)), Math.trunc(leaseMs)],
    );
    rows.sort((a, b) => Number(a.n) - Number(b.n));
    return rows.map(toWebhook);
  }

  async release(owner: string): Promise<void> {
    await this.db.query('UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1', [
      owner,
    ]);
  }

  async recordAttempt(id: string, owner: string, a: WebhookAttempt): Promise<boolean> {
    const sent = a.status !== null || a.error !== null;
    const rows = await this.db.query(
      `UPDATE webhook_endpoints SET
         cursor = greatest(cursor, coalesce($3::bigint, cursor)),
         last_attempt_at = CASE WHEN $4::boolean THEN $5::bigint ELSE last_attempt_at END,
         last_success_at = CASE WHEN $6::boolean IS TRUE THEN $5::bigint ELSE last_success_at END,
         last_status = CASE WHEN $4::boolean THEN $7::integer ELSE last_status END,
         last_error = CASE WHEN $6::boolean IS FALSE THEN $8::text ELSE last_error END,
         failures = $9, first_failure_at = $10, next_attempt_at = $11,
         state = CASE WHEN state = 'active' THEN $12 ELSE state END,
         paused_reason = CASE WHEN state = 'active' THEN $13 ELSE paused_reason END
       WHERE id = $1 AND lease_owner = $2 RETURNING id`,
      [
        id,
        owner,
        a.cursor,
        sent,
        a.at,
        a.ok,
        a.status,
        a.error,
        a.failures,
        a.firstFailureAt,
        a.nextAttemptAt,
        a.state,
        a.pausedReason,
      ],
    );
    return rows.length > 0;
  }
}

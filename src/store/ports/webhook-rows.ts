/** The webhook row shape (times epoch ms, tickers and secrets JSON text), its mapping, and the shared rotation rule. */
import { rotateSecrets } from '../../domain/webhook-secrets.js';
import type { NewWebhook, WebhookEndpoint, WebhookSecretRecord, WebhookState } from './index.js';

export interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  tickers: string | null;
  min_relevance: number | null;
  secrets: string;
  state: string;
  paused_reason: string | null;
  cursor: number | string;
  failures: number;
  first_failure_at: number | string | null;
  next_attempt_at: number | string | null;
  last_attempt_at: number | string | null;
  last_success_at: number | string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number | string;
}

export const WEBHOOK_COLUMNS =
  'id, account_id, url, tickers, min_relevance, secrets, state, paused_reason, cursor, failures, first_failure_at, next_attempt_at, last_attempt_at, last_success_at, last_status, last_error, created_at';

const ms = (v: number | string | null) => (v === null ? null : Number(v));

interface StoredSecret {
  secret: string;
  expires_at: number | null;
}

const storedSecrets = (json: string): WebhookSecretRecord[] =>
  (JSON.parse(json) as StoredSecret[]).map((s) => ({ secret: s.secret, expiresAt: s.expires_at }));

export function toWebhook(r: WebhookRow): WebhookEndpoint {
  const secrets = storedSecrets(r.secrets);
  return {
    id: r.id,
    accountId: r.account_id,
    url: r.url,
    tickers: r.tickers === null ? null : (JSON.parse(r.tickers) as string[]),
    minRelevance: r.min_relevance === null ? null : Number(r.min_relevance),
    secrets,
    state: r.state as WebhookState,
    pausedReason: r.paused_reason,
    cursor: Number(r.cursor),
    failures: Number(r.failures),
    firstFailureAt: ms(r.first_failure_at),
    nextAttemptAt: ms(r.next_attempt_at),
    lastAttemptAt: ms(r.last_attempt_at),
    lastSuccessAt: ms(r.last_success_at),
    lastStatus: r.last_status === null ? null : Number(r.last_status),
    lastError: r.last_error,
    createdAt: Number(r.created_at),
  };
}

/** The values of a new endpoint's row: id, account_id, url, tickers, min_relevance, secrets, created_at. */
export function newWebhookValues(e: NewWebhook, now: number): unknown[] {
  const secrets = JSON.stringify([{ secret: e.secret, expires_at: null } satisfies StoredSecret]);
  return [
    e.id,
    e.accountId,
    e.url,
    e.tickers === null ? null : JSON.stringify(e.tickers),
    e.minRelevance ?? null,
    secrets,
    now,
  ];
}

/**
 * After a rotation: the new secret first, then at most PREVIOUS_SECRETS_MAX valid until `now + overlapMs` at the
 * latest (an earlier expiry is kept).
 */
export function rotatedSecrets(current: string, secret: string, now: number, overlapMs: number): string {
  const { secrets } = rotateSecrets(storedSecrets(current), secret, now, overlapMs);
  return JSON.stringify(secrets.map((s): StoredSecret => ({ secret: s.secret, expires_at: s.expiresAt })));
}

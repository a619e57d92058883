/**
 * Verifying the service's webhooks (Standard Webhooks): `verifyWebhook(secret, headers, body)` checks
 * the `webhook-signature` against `{webhook-id}.{webhook-timestamp}.{body}` with every `v1` signature
 * of the header (several during a secret rotation), in constant time, and refuses a timestamp more than
 * 5 minutes from the clock; it returns the typed body.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { webhookRules, type WebhookMessage } from './generated/webhooks.js';

export type { WebhookMessage } from './generated/webhooks.js';

/**
 * Why a webhook was refused: `signature` (no matching v1 signature), `timestamp` (too old or new), `headers` (missing
 * or malformed), `body` (not the JSON of a webhook).
 */
export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: 'signature' | 'timestamp' | 'headers' | 'body',
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Headers as Node's IncomingMessage, a fetch `Headers`, or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds since the epoch; default: now. */
  nowSeconds?: number;
  /** Allowed clock difference in seconds; default: the contract's 300 (5 minutes). */
  toleranceSeconds?: number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const h = headers as Record<string, string | string[] | undefined>;
  const v = h[name] ?? Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v[0] : v;
}

function keyOf(secret: string): Buffer {
  const raw = secret.startsWith(webhookRules.secretPrefix) ? secret.slice(webhookRules.secretPrefix.length) : secret;
  const key = Buffer.from(raw, 'base64');
  if (key.length === 0)
    throw new TypeError(`the webhook secret must be ${webhookRules.secretPrefix} followed by base64`);
  return key;
}

/**
 * The typed body of a verified webhook request; throws WebhookVerificationError otherwise. Pass the raw
 * body exactly as received (a string or the bytes), before any JSON parsing.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): WebhookMessage {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sig = header(headers, 'webhook-signature');
  if (!id || !ts || !sig)
    throw new WebhookVerificationError('headers', 'missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d{1,12}$/.test(ts)) throw new WebhookVerificationError('headers', 'webhook-timestamp is not Unix seconds');
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? webhookRules.toleranceSeconds;
  if (Math.abs(now - Number(ts)) > tolerance)
    throw new WebhookVerificationError('timestamp', `webhook-timestamp is more than ${tolerance} s from the clock`);
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const expected = createHmac('sha256', keyOf(secret)).update(`${id}.${ts}.${text}`).digest();
  const ok = sig.split(' ').some((part) => {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') return false;
    const got = Buffer.from(part.slice(comma + 1), 'base64');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
  if (!ok) throw new WebhookVerificationError('signature', 'no webhook-signature matches the secret');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('body', 'the body is not JSON');
  }
  const m = parsed as Partial<WebhookMessage> | null;
  if (
    !m ||
    typeof m !== 'object' ||
    typeof m.type !== 'string' ||
    typeof m.timestamp !== 'string' ||
    typeof m.data !== 'object' ||
    m.data === null
  ) {
    throw new WebhookVerificationError('body', 'the body is not a webhook message (type, timestamp, data)');
  }
  return parsed as WebhookMessage;
}

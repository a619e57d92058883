/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): `v1,<base64 HMAC-SHA256>` of
 * `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded bytes after `whsec_` (not the text);
 * one signature per secret, space-separated.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { webhookRules } from '../contract/index.js';

/** Bytes of a new secret (Standard Webhooks recommends 24 to 64). */
const SECRET_BYTES = 32;

/** A new signing secret, `whsec_` + base64 of random bytes. */
export function newSecret(): string {
  return `${webhookRules.secretPrefix}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The HMAC key of a `whsec_…` secret; throws on anything else. */
function secretKey(secret: string): Buffer {
  if (!secret.startsWith(webhookRules.secretPrefix))
    throw new RangeError(`a webhook secret starts with ${webhookRules.secretPrefix}`);
  const key = Buffer.from(secret.slice(webhookRules.secretPrefix.length), 'base64');
  if (key.length === 0) throw new RangeError('the webhook secret is empty');
  return key;
}

/** `v1,<base64>` for one secret. */
export function signatureFor(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt, signed with every secret given (newest first). */
export function signedHeaders(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signatureFor(s, msgId, timestampSeconds, body)).join(' '),
  };
}

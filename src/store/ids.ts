import { createHash, randomBytes } from 'node:crypto';

/** A random identifier with a readable prefix, e.g. `acct_3kq…`. */
export function randomId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`;
}

/** A new API key: the brand prefix and 32 characters of randomness (192 bits). */
export function newApiKey(prefix: string): string {
  return prefix + randomBytes(24).toString('base64url');
}

/** Only this is stored: SHA-256 of the key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

import { createHash, randomBytes } from 'node:crypto';
import { decodeTime } from 'ulid';

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

/** Crockford base32 of epoch ms, 10 chars: the time part of a ULID. */
const ENCODING = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export function ulidTimePrefix(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ENCODING[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** The next ULID after `id` in the same millisecond (the random part plus one, as a monotonic ULID). */
function incrementUlid(id: string): string {
  const chars = id.split('');
  for (let i = chars.length - 1; i >= 10; i--) {
    const v = ENCODING.indexOf(chars[i]!);
    if (v < 31) {
      chars[i] = ENCODING[v + 1]!;
      return chars.join('');
    }
    chars[i] = ENCODING[0]!;
  }
  throw new Error('ULID random part exhausted within one millisecond');
}

/** Receive time and ids of one insert, under the write lock: never below the newest article, so all orders agree. */
export function receiveStamp(
  at: number | (() => number),
  newestId: string | undefined,
  ulid: (ms: number) => string,
): { receivedAt: string; nextId: () => string } {
  if (typeof at === 'number') return { receivedAt: new Date(at).toISOString(), nextId: () => ulid(at) };
  const newestMs = newestId === undefined ? 0 : decodeTime(newestId);
  const receivedMs = Math.max(at(), newestMs);
  let prev = newestId !== undefined && newestMs === receivedMs ? newestId : undefined;
  return {
    receivedAt: new Date(receivedMs).toISOString(),
    nextId: () => (prev = prev === undefined ? ulid(receivedMs) : incrementUlid(prev)),
  };
}

/**
 * Signing secrets at rest: HMAC needs the secret itself, so it cannot be hashed like API keys. With
 * WEBHOOK_SECRETS_KEY (32 bytes) each is sealed with AES-256-GCM (`enc1:`), else stored `plain:` under the
 * database's own protection. Shown once, at creation or rotation; never logged.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The configured WEBHOOK_SECRETS_KEY cannot open a stored secret (none set, or another key): a configuration error. */
export class SecretKeyError extends Error {
  override readonly name = 'SecretKeyError';
}

export class SecretBox {
  constructor(private readonly key?: Buffer) {
    if (key && key.length !== 32) throw new RangeError('WEBHOOK_SECRETS_KEY must be 32 bytes');
  }

  get encrypts(): boolean {
    return this.key !== undefined;
  }

  seal(secret: string): string {
    if (!this.key) return `plain:${secret}`;
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
    return `enc1:${iv.toString('base64')}:${c.getAuthTag().toString('base64')}:${ct.toString('base64')}`;
  }

  open(sealed: string): string {
    if (sealed.startsWith('plain:')) return sealed.slice('plain:'.length);
    const m = /^enc1:([^:]+):([^:]+):([^:]+)$/.exec(sealed);
    if (!m) throw new Error('unreadable stored webhook secret');
    if (!this.key)
      throw new SecretKeyError(
        'a webhook secret is stored encrypted: set WEBHOOK_SECRETS_KEY to the key it was sealed with',
      );
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(m[1]!, 'base64'));
    d.setAuthTag(Buffer.from(m[2]!, 'base64'));
    try {
      return Buffer.concat([d.update(Buffer.from(m[3]!, 'base64')), d.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(
        'a webhook secret could not be opened: WEBHOOK_SECRETS_KEY is not the key it was sealed with',
      );
    }
  }
}

/** AccountStore on PostgreSQL: accounts and key hashes (never the keys). */
import type { Tier } from '../../contract/index.js';
import { nextPeriodEnd, planOf, toIso, type AccountRecord } from '../../domain/tiers.js';
import { randomId } from '../ports/ids.js';
import type { AccountStore, KeyInfo, KeyRecord } from '../ports/index.js';
import type { Db } from './db.js';
import { toAccount, toKey, toKeyInfo, type AccountRow, type KeyInfoRow, type KeyRow } from '../ports/rows.js';

export class PgAccounts implements AccountStore {
  constructor(private readonly db: Db) {}

  async createAccount(tier: Tier, now: number, accountId = randomId('acct')): Promise<AccountRecord> {
    const rows = await this.db.query<AccountRow>(
      `INSERT INTO accounts (id, tier, period_end, cancelled_at, created_at) VALUES ($1, $2, $3, NULL, $4)
       RETURNING id, tier, period_end, cancelled_at`,
      [accountId, tier, planOf(tier).paid ? nextPeriodEnd(now) : null, toIso(now)],
    );
    return toAccount(rows[0]!);
  }

  async getAccount(accountId: string): Promise<AccountRecord | undefined> {
    const rows = await this.db.query<AccountRow>(
      'SELECT id, tier, period_end, cancelled_at FROM accounts WHERE id = $1',
      [accountId],
      'fns_get_account',
    );
    return rows[0] && toAccount(rows[0]);
  }

  async setTier(accountId: string, tier: Tier, now: number): Promise<AccountRecord | undefined> {
    await this.db.query('UPDATE accounts SET tier = $1, period_end = $2, cancelled_at = NULL WHERE id = $3', [
      tier,
      planOf(tier).paid ? nextPeriodEnd(now) : null,
      accountId,
    ]);
    return this.getAccount(accountId);
  }

  async cancel(accountId: string, now: number): Promise<AccountRecord | undefined> {
    await this.db.query('UPDATE accounts SET cancelled_at = $1 WHERE id = $2 AND cancelled_at IS NULL', [
      toIso(now),
      accountId,
    ]);
    return this.getAccount(accountId);
  }

  async createKey(accountId: string, keyHash: string, keyId: string, now: number): Promise<void> {
    await this.db.query(
      'INSERT INTO api_keys (id, account_id, key_hash, active, created_at) VALUES ($1, $2, $3, true, $4)',
      [keyId, accountId, keyHash, toIso(now)],
    );
  }

  async findKey(keyHash: string): Promise<KeyRecord | undefined> {
    const rows = await this.db.query<KeyRow>(
      'SELECT id, account_id, active FROM api_keys WHERE key_hash = $1',
      [keyHash],
      'fns_find_key',
    );
    return rows[0] && toKey(rows[0]);
  }

  async setKeyActive(keyId: string, active: boolean): Promise<KeyRecord | undefined> {
    const rows = await this.db.query<KeyRow>(
      'UPDATE api_keys SET active = $1 WHERE id = $2 RETURNING id, account_id, active',
      [active, keyId],
    );
    return rows[0] && toKey(rows[0]);
  }

  async listKeys(accountId?: string): Promise<KeyInfo[]> {
    const rows =
      accountId === undefined
        ? await this.db.query<KeyInfoRow>('SELECT id, account_id, active, created_at FROM api_keys ORDER BY n')
        : await this.db.query<KeyInfoRow>(
            'SELECT id, account_id, active, created_at FROM api_keys WHERE account_id = $1 ORDER BY n',
            [accountId],
          );
    return rows.map(toKeyInfo);
  }
}

/** AccountStore on SQLite: accounts and key hashes (never the keys). */
import type Database from 'better-sqlite3';
import type { Tier } from '../../contract/index.js';
import { nextPeriodEnd, planOf, toIso, type AccountRecord } from '../../domain/tiers.js';
import { randomId } from '../ports/ids.js';
import type { AccountStore, KeyInfo, KeyRecord } from '../ports/index.js';
import { toAccount, toKey, toKeyInfo, type AccountRow, type KeyInfoRow, type KeyRow } from '../ports/rows.js';

export class SqliteAccounts implements AccountStore {
  private readonly st;

  constructor(db: Database.Database) {
    this.st = {
      getAccount: db.prepare<[string], AccountRow>(
        'SELECT id, tier, period_end, cancelled_at FROM accounts WHERE id = ?',
      ),
      insertAccount: db.prepare(
        'INSERT INTO accounts (id, tier, period_end, cancelled_at, created_at) VALUES (?, ?, ?, NULL, ?)',
      ),
      setTier: db.prepare('UPDATE accounts SET tier = ?, period_end = ?, cancelled_at = NULL WHERE id = ?'),
      cancel: db.prepare('UPDATE accounts SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL'),
      insertKey: db.prepare(
        'INSERT INTO api_keys (id, account_id, key_hash, active, created_at) VALUES (?, ?, ?, 1, ?)',
      ),
      findKey: db.prepare<[string], KeyRow>('SELECT id, account_id, active FROM api_keys WHERE key_hash = ?'),
      setKeyActive: db.prepare('UPDATE api_keys SET active = ? WHERE id = ?'),
      getKey: db.prepare<[string], KeyRow>('SELECT id, account_id, active FROM api_keys WHERE id = ?'),
      listKeys: db.prepare<[], KeyInfoRow>('SELECT id, account_id, active, created_at FROM api_keys ORDER BY rowid'),
      listKeysOf: db.prepare<[string], KeyInfoRow>(
        'SELECT id, account_id, active, created_at FROM api_keys WHERE account_id = ? ORDER BY rowid',
      ),
    };
  }

  async createAccount(tier: Tier, now: number, accountId = randomId('acct')): Promise<AccountRecord> {
    this.st.insertAccount.run(accountId, tier, planOf(tier).paid ? nextPeriodEnd(now) : null, toIso(now));
    return (await this.getAccount(accountId))!;
  }

  async getAccount(accountId: string): Promise<AccountRecord | undefined> {
    const r = this.st.getAccount.get(accountId);
    return r && toAccount(r);
  }

  async setTier(accountId: string, tier: Tier, now: number): Promise<AccountRecord | undefined> {
    this.st.setTier.run(tier, planOf(tier).paid ? nextPeriodEnd(now) : null, accountId);
    return this.getAccount(accountId);
  }

  async cancel(accountId: string, now: number): Promise<AccountRecord | undefined> {
    this.st.cancel.run(toIso(now), accountId);
    return this.getAccount(accountId);
  }

  async createKey(accountId: string, keyHash: string, keyId: string, now: number): Promise<void> {
    this.st.insertKey.run(keyId, accountId, keyHash, toIso(now));
  }

  async findKey(keyHash: string): Promise<KeyRecord | undefined> {
    const r = this.st.findKey.get(keyHash);
    return r && toKey(r);
  }

  async setKeyActive(keyId: string, active: boolean): Promise<KeyRecord | undefined> {
    this.st.setKeyActive.run(active ? 1 : 0, keyId);
    const r = this.st.getKey.get(keyId);
    return r && toKey(r);
  }

  async listKeys(accountId?: string): Promise<KeyInfo[]> {
    const rows = accountId === undefined ? this.st.listKeys.all() : this.st.listKeysOf.all(accountId);
    return rows.map(toKeyInfo);
  }
}

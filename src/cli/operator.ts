/** Operator actions behind the `fns` command line, on the store ports (testable without a shell). */
import { assignableTiers, plans, type Tier } from '../contract/index.js';
import type { AccountRecord } from '../domain/tiers.js';
import { parseNdjson } from '../ingest/parse.js';
import { hashKey, newApiKey, randomId } from '../store/ids.js';
import type { AccountStore, ArticleStore } from '../store/ports.js';

export class OperatorError extends Error {}

export function checkTier(tier: string | undefined): Tier {
  if (!tier || !assignableTiers.includes(tier as Tier)) {
    throw new OperatorError(`--tier must be one of ${assignableTiers.join(', ')}${tier ? `, got "${tier}"` : ''}`);
  }
  return tier as Tier;
}

export async function createKey(
  store: AccountStore,
  opts: { tier?: string; accountId?: string; livePrefix: string; now: number },
): Promise<{ key: string; key_id: string; account_id: string }> {
  let account: AccountRecord | undefined = opts.accountId ? await store.getAccount(opts.accountId) : undefined;
  if (account) {
    if (opts.tier !== undefined && checkTier(opts.tier) !== account.tier) {
      throw new OperatorError(`account ${account.id} is on ${account.tier}; change it with \`fns accounts set-tier ${account.id} ${opts.tier}\``);
    }
  } else {
    if (opts.accountId !== undefined && !/^[\w-]{1,64}$/.test(opts.accountId)) {
      throw new OperatorError('--account must be 1-64 letters, digits, "_" or "-"');
    }
    account = await store.createAccount(checkTier(opts.tier), opts.now, opts.accountId);
  }
  const key = newApiKey(opts.livePrefix);
  const keyId = randomId('key');
  await store.createKey(account.id, hashKey(key), keyId, opts.now);
  return { key, key_id: keyId, account_id: account.id };
}

export async function setKeyActive(store: AccountStore, keyId: string | undefined, active: boolean) {
  if (!keyId) throw new OperatorError('a key id is required, e.g. key_Ab3…');
  const rec = await store.setKeyActive(keyId, active);
  if (!rec) throw new OperatorError(`no key ${keyId}`);
  return { key_id: rec.keyId, account_id: rec.accountId, active: rec.active };
}

export async function setTier(store: AccountStore, accountId: string | undefined, tier: string | undefined, now: number) {
  if (!accountId) throw new OperatorError('an account id is required');
  const t = checkTier(tier);
  const acct = await store.setTier(accountId, t, now);
  if (!acct) throw new OperatorError(`no account ${accountId}`);
  return accountJson(acct);
}

export async function cancel(store: AccountStore, accountId: string | undefined, now: number) {
  if (!accountId) throw new OperatorError('an account id is required');
  const current = await store.getAccount(accountId);
  if (!current) throw new OperatorError(`no account ${accountId}`);
  // Spec §3: only a subscription can be cancelled; a `free` account stays free (and blocked).
  if (current.cancelledAt !== null) throw new OperatorError(`account ${accountId} was already cancelled at ${current.cancelledAt}`);
  if (!plans[current.tier].paid) throw new OperatorError(`account ${accountId} has no subscription to cancel (tier ${current.tier})`);
  return accountJson((await store.cancel(accountId, now))!);
}

function accountJson(a: AccountRecord) {
  return { account_id: a.id, tier: a.tier, period_end: a.periodEnd, cancelled_at: a.cancelledAt };
}

/** `clock` is read by the store inside the write transaction: `received_at` is the commit time. */
export async function ingest(store: ArticleStore, text: string, clock: () => number) {
  const report = parseNdjson(text);
  const stored = report.articles.length ? await store.insert(report.articles, clock) : [];
  return { lines: report.lines, ingested: stored.length, ids: stored.map((a) => a.id), errors: report.errors };
}

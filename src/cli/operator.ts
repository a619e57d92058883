/** Operator actions behind the `fns` command line, on the store ports (testable without a shell). */
import { assignableTiers, plans, type Tier } from '../contract/index.js';
import { effectiveTier, type AccountRecord } from '../domain/tiers.js';
import type { BatchAnswer, Offer } from '../ingest/pipeline.js';
import { sliceTurns, type SliceBudget } from '../runtime/slices.js';
import { hashKey, newApiKey, randomId } from '../store/ports/ids.js';
import type { AccountStore, ArticleStore, DuplicateReason, KeyInfo, SourceStore } from '../store/ports/index.js';
import { CliError, UsageError } from './errors.js';
import type { InputLine } from './input.js';

// A malformed request is a UsageError (exit 2); one refused for what the store holds is a CliError (exit 1).

function checkTier(tier: string | undefined, flag = '--tier'): Tier {
  if (!tier || !assignableTiers.includes(tier as Tier)) {
    throw new UsageError(`${flag} must be one of ${assignableTiers.join(', ')}${tier ? `, got "${tier}"` : ''}`);
  }
  return tier as Tier;
}

async function existingAccount(store: AccountStore, accountId: string): Promise<AccountRecord> {
  const account = await store.getAccount(accountId);
  if (!account)
    throw new CliError(
      `no account ${accountId} (fns keys list shows the accounts that have keys; fns accounts create makes one)`,
    );
  return account;
}

/** A new account with a generated id; `fns keys create --account <id>` then adds keys to it. */
export async function createAccount(store: AccountStore, opts: { tier: string | undefined; now: number }) {
  return accountJson(await store.createAccount(checkTier(opts.tier), opts.now));
}

/** A new account's first key (`--tier`), or one more key on an existing account (never one made by a typo). */
export async function createKey(
  store: AccountStore,
  opts: { tier?: string; accountId?: string; livePrefix: string; now: number },
): Promise<{ key: string; key_id: string; account_id: string }> {
  let account: AccountRecord;
  if (opts.accountId !== undefined) {
    account = await existingAccount(store, opts.accountId);
    if (opts.tier !== undefined && checkTier(opts.tier) !== account.tier) {
      throw new CliError(
        `account ${account.id} is on ${account.tier}; change it with \`fns accounts set-tier ${account.id} ${opts.tier}\``,
      );
    }
  } else {
    if (opts.tier === undefined)
      throw new UsageError(
        'give --tier <tier> for a new account, or --account <account_id> for one more key on an existing one',
      );
    account = await store.createAccount(checkTier(opts.tier), opts.now);
  }
  const key = newApiKey(opts.livePrefix);
  const keyId = randomId('key');
  await store.createKey(account.id, hashKey(key), keyId, opts.now);
  return { key, key_id: keyId, account_id: account.id };
}

export async function setKeyActive(store: AccountStore, keyId: string, active: boolean) {
  const rec = await store.setKeyActive(keyId, active);
  if (!rec) throw new CliError(`no key ${keyId} (fns keys list shows the key ids)`);
  return { key_id: rec.keyId, account_id: rec.accountId, active: rec.active };
}

export async function setTier(store: AccountStore, accountId: string, tier: string | undefined, now: number) {
  const t = checkTier(tier, 'the tier');
  await existingAccount(store, accountId);
  return accountJson((await store.setTier(accountId, t, now))!);
}

export async function cancel(store: AccountStore, accountId: string, now: number) {
  const current = await existingAccount(store, accountId);
  // Spec §3: only a subscription can be cancelled; a `free` account stays free (and blocked).
  if (current.cancelledAt !== null)
    throw new CliError(`account ${accountId} was already cancelled at ${current.cancelledAt}`);
  if (!plans[current.tier].paid)
    throw new CliError(`account ${accountId} has no subscription to cancel (tier ${current.tier})`);
  return accountJson((await store.cancel(accountId, now))!);
}

/** `fns accounts show`: the account as stored, the tier in force now, and its keys (ids and state only). */
export async function showAccount(store: AccountStore, accountId: string, now: number) {
  const account = await existingAccount(store, accountId);
  const keys = await store.listKeys(accountId);
  return { ...accountJson(account), effective_tier: effectiveTier(account, now), keys: keys.map(keyJson) };
}

/**
 * `fns articles show <id>`: the article as the contract shows it, the sources that carried it and the items resolved to
 * it.
 */
export async function showArticle(
  store: { articles: Pick<ArticleStore, 'getMany'>; sources: Pick<SourceStore, 'carriersOf' | 'itemsOf'> },
  id: string,
) {
  const [article] = await store.articles.getMany([id]);
  if (!article) throw new CliError(`no article ${id}`);
  const [carriers, items] = await Promise.all([store.sources.carriersOf(id), store.sources.itemsOf(id)]);
  return {
    ...article,
    carriers: carriers.map((c) => ({ source: c.source, url: c.url, at: c.at, reason: c.reason })),
    items: items.map((i) => ({
      source: i.source,
      external_id: i.externalId,
      url: i.url,
      seen_at: i.seenAt,
      reason: i.reason,
    })),
  };
}

/** `fns keys list`: every key, or one account's (an unknown account is refused, not shown as empty). */
export async function listKeys(store: AccountStore, accountId?: string) {
  if (accountId !== undefined) await existingAccount(store, accountId);
  const keys = await store.listKeys(accountId);
  return { keys: keys.map((k) => ({ ...keyJson(k), account_id: k.accountId })) };
}

function accountJson(a: AccountRecord) {
  return { account_id: a.id, tier: a.tier, period_end: a.periodEnd, cancelled_at: a.cancelledAt };
}

function keyJson(k: KeyInfo) {
  return { key_id: k.keyId, active: k.active, created_at: k.createdAt };
}

export interface IngestReport {
  /** Non-blank lines read. */
  lines: number;
  /** Lines stored as new articles. */
  ingested: number;
  /** Ids of the stored articles, in input order. */
  ids: string[];
  /** Lines that are an article already stored (same item, same link, same headline and time, near-duplicate). */
  duplicates: { line: number; reason: DuplicateReason; id: string }[];
  /** Skipped lines, by 1-based line number of the input (blank lines count). */
  errors: { line: number; error: string }[];
}

/**
 * An ingest that stopped early: `report` covers lines 1 to `doneThroughLine` exactly, and nothing after it was stored.
 */
export class IngestStopped extends Error {
  constructor(
    readonly report: IngestReport,
    readonly reason: unknown,
    readonly doneThroughLine: number,
  ) {
    super(`ingest stopped after line ${doneThroughLine}`);
  }
}

/** At most this many articles per write transaction: other writers (a second ingest, the service) interleave. */
export const INGEST_CHUNK = 1000;

export interface IngestOptions {
  /** After every line and every commit; cheap, the caller throttles. */
  onProgress?: (report: IngestReport) => void;
  /** A skipped line, as it is found. */
  onSkip?: (error: { line: number; error: string }) => void;
  /** Stops before the next line (Ctrl+C): the lines not yet committed are not stored. */
  signal?: AbortSignal;
  /** How long the line loop runs between turns of the event loop (default SLICE_BUDGET_MS). */
  slices?: SliceBudget;
}

/** A skipped line into the report, and to `onSkip` as it is found. */
function skip(report: IngestReport, line: number, error: string, onSkip: IngestOptions['onSkip']): void {
  const e = { line, error };
  report.errors.push(e);
  onSkip?.(e);
}

/** A stored block's answers into the report, in line order. */
function addStored(report: IngestReport, results: BatchAnswer['results'], onSkip: IngestOptions['onSkip']): void {
  let skipped = false;
  for (const r of results) {
    if (r.status === 'stored') {
      report.ingested++;
      report.ids.push(r.id);
    } else if (r.status === 'duplicate') report.duplicates.push({ line: r.line, reason: r.reason, id: r.id });
    else {
      // Its dedup step failed with an unexpected error: skipped by itself, the block is stored.
      skip(report, r.line, r.error, onSkip);
      skipped = true;
    }
  }
  if (skipped) report.errors.sort((a, b) => a.line - b.line);
}

/**
 * Takes NDJSON lines through the ingestion pipeline, one short write transaction per INGEST_CHUNK lines: each line
 * is stored, a duplicate, or skipped by itself (never its chunk). `received_at` is the chunk's commit time.
 */
export async function ingest(
  store: Pick<SourceStore, 'ingestItems'>,
  lines: AsyncIterable<InputLine> | Iterable<InputLine>,
  clock: () => number,
  opts: IngestOptions = {},
): Promise<IngestReport> {
  // Loaded here: enrichment (directory, sentiment model) is needed by this command only.
  const { operatorOffer, storeOffers } = await import('../ingest/pipeline.js');
  const report: IngestReport = { lines: 0, ingested: 0, ids: [], duplicates: [], errors: [] };
  let pending: Offer[] = [];
  let lineNo = 0;
  // Lines 1..done are settled (stored, duplicate or skipped); `lines` then counted `linesAtDone` of them.
  let done = 0;
  let linesAtDone = 0;
  const commit = async () => {
    if (pending.length > 0) {
      const answer = await storeOffers(pending, store, clock);
      pending = [];
      addStored(report, answer.results, opts.onSkip);
    }
    done = lineNo;
    linesAtDone = report.lines;
  };
  // The event loop (progress, Ctrl+C, a server sharing the process) gets a turn between slices (src/runtime/slices.ts).
  const turns = sliceTurns(opts.slices);
  try {
    for await (const raw of lines) {
      await turns();
      opts.signal?.throwIfAborted();
      lineNo++;
      // The line reader refused it (too long, not UTF-8): skipped with its line number, like a bad line.
      if (typeof raw !== 'string') {
        report.lines++;
        skip(report, lineNo, raw.refused, opts.onSkip);
        opts.onProgress?.(report);
        continue;
      }
      if (raw.trim() === '') continue;
      report.lines++;
      const offer = operatorOffer(lineNo, raw);
      if ('item' in offer) {
        pending.push(offer);
        if (pending.length >= INGEST_CHUNK) await commit();
      } else skip(report, lineNo, offer.error, opts.onSkip);
      opts.onProgress?.(report);
    }
    opts.signal?.throwIfAborted();
    await commit();
  } catch (err) {
    const settled = {
      ...report,
      lines: linesAtDone,
      errors: report.errors.filter((e) => e.line <= done),
      duplicates: report.duplicates.filter((d) => d.line <= done),
    };
    throw new IngestStopped(settled, err, done);
  }
  opts.onProgress?.(report);
  return report;
}

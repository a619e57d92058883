/**
 * `fns webhooks …`: an account's webhook endpoints, pro and max only (the ticker filter max only), as the stream.
 * A secret is printed once and never again. Refusals exit 1; a bad URL or ticker list is a usage error (exit 2).
 */
import type { Config } from '../config/index.js';
import { articleRules, minRelevanceDefault, webhookRules, type Tier } from '../contract/index.js';
import { effectiveTier, planOf, type AccountRecord } from '../domain/tiers.js';
import { PREVIOUS_SECRETS_MAX, signingSecrets } from '../domain/webhook-secrets.js';
import type { StoredArticle } from '../domain/articles.js';
import type { StorePorts, WebhookEndpoint } from '../store/ports/index.js';
import {
  checkUrlShape,
  DestinationError,
  httpSender,
  messageId,
  newEndpointId,
  newSecret,
  resolveDestination,
  SecretBox,
  SecretKeyError,
  signedHeaders,
  webhookBody,
} from '../webhooks/index.js';
import { CliError, EXIT, UsageError } from './errors.js';
import { table, withStore, type CommandRun } from './io.js';
import { relative, URL_MAX } from './sources.js';
import { printable } from '../domain/printable.js';

const TICKERS_MAX = 100;

function checkTickers(raw: string | undefined): string[] | null {
  if (raw === undefined) return null;
  const list = [
    ...new Set(
      raw
        .split(',')
        .map((t) => t.trim().toUpperCase())
        .filter(Boolean),
    ),
  ];
  if (list.length === 0 || list.length > TICKERS_MAX)
    throw new UsageError(`--tickers must list 1 to ${TICKERS_MAX} symbols separated by commas, got "${raw}"`);
  const bad = list.find((t) => !articleRules.tickerPattern.test(t));
  if (bad) throw new UsageError(`--tickers: "${bad}" is not a ticker symbol (e.g. AAPL, BRK.B, BTC-USD)`);
  return list;
}

function checkRelevance(raw: string | undefined, tickers: string[] | null): number | null {
  if (raw === undefined) return null;
  if (tickers === null) throw new UsageError('--min-relevance applies to the --tickers filter: give --tickers too');
  if (!/^(?:\d+(?:\.\d+)?|\.\d+)$/.test(raw) || Number(raw) > 1)
    throw new UsageError(`--min-relevance must be a decimal number from 0 to 1 (e.g. 0.8), got "${raw}"`);
  return Number(raw);
}

/** The least relevance an endpoint's ticker filter applies (null without a filter). */
function relevanceShown(e: WebhookEndpoint): number | null {
  return e.tickers === null ? null : (e.minRelevance ?? minRelevanceDefault);
}

/** Articles stored after the last one the endpoint received (or skipped by its ticker filter). */
const backlog = (e: WebhookEndpoint, latestSeq: number) => Math.max(0, latestSeq - e.cursor);

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The JSON form of an endpoint (never a secret; times as ISO 8601 UTC). */
function webhookJson(e: WebhookEndpoint, latestSeq: number, now: number) {
  return {
    id: e.id,
    account_id: e.accountId,
    url: e.url,
    tickers: e.tickers,
    min_relevance: relevanceShown(e),
    state: e.state,
    paused_reason: e.pausedReason,
    created_at: iso(e.createdAt),
    last_success_at: iso(e.lastSuccessAt),
    last_attempt_at: iso(e.lastAttemptAt),
    last_status: e.lastStatus,
    last_error: e.lastError,
    failures_in_a_row: e.failures,
    next_attempt_at: iso(e.nextAttemptAt),
    backlog: backlog(e, latestSeq),
    secrets: signingSecrets(e.secrets, now).length,
  };
}

function webhooksTable(list: WebhookEndpoint[], latestSeq: number, now: number): string {
  if (list.length === 0) return 'no webhook endpoints (fns webhooks add <account_id> <url> adds one)';
  return table(
    ['ID', 'ACCOUNT', 'STATE', 'LAST SUCCESS', 'FAILURES', 'NEXT ATTEMPT', 'BACKLOG'],
    list.map((e) => ({
      cells: [
        e.id,
        e.accountId,
        e.state === 'active' && e.failures > 0 ? 'failing' : e.state,
        relative(e.lastSuccessAt, now),
        String(e.failures),
        e.state !== 'active'
          ? '-'
          : e.nextAttemptAt === null
            ? latestSeq > e.cursor
              ? 'now'
              : '-'
            : relative(e.nextAttemptAt, now),
        String(backlog(e, latestSeq)),
      ],
      // The URL and the last error (a receiver's status text and answer) escaped: one line each.
      details: [
        `  ${printable(e.url)}${e.tickers ? `  (tickers ${e.tickers.join(',')}, min relevance ${relevanceShown(e)})` : ''}`,
        ...(e.pausedReason ? [`  ${e.state}: ${printable(e.pausedReason)}`] : []),
        ...(e.lastError
          ? [`  last error: ${printable(e.lastError)}${e.lastAttemptAt ? ` (${relative(e.lastAttemptAt, now)})` : ''}`]
          : []),
      ],
    })),
  );
}

const noEndpoint = (id: string) => new CliError(`no webhook endpoint "${id}" (fns webhooks list shows them)`);

async function existingEndpoint(store: StorePorts, id: string): Promise<WebhookEndpoint> {
  const e = await store.webhooks.get(id);
  if (!e) throw noEndpoint(id);
  return e;
}

/** The account's tier now when it is pro or max (the stream's tiers), else a clear refusal. */
function webhookTier(account: AccountRecord, now: number): Tier {
  const tier = effectiveTier(account, now);
  if (!planOf(tier).stream) {
    throw new CliError(
      `account ${account.id} is on ${tier}: webhooks are available to pro and max accounts only (as the stream); fns accounts set-tier ${account.id} pro changes the plan`,
    );
  }
  return tier;
}

/** The address to send to, checked after DNS resolution; a private or unresolvable one is refused (exit 1). */
async function destination(url: URL, config: Config) {
  try {
    return await resolveDestination(url, config.webhookAllowPrivate);
  } catch (e) {
    if (e instanceof DestinationError) throw new CliError(`refused: ${e.message}`);
    throw e;
  }
}

export async function addWebhook({ args, option, config, print }: CommandRun): Promise<number> {
  // Validate the command line before touching the store.
  const accountId = args[0]!;
  const rawUrl = args[1]!;
  if (rawUrl.length > URL_MAX) throw new UsageError(`<url> is longer than ${URL_MAX} characters`);
  let url: URL;
  try {
    url = checkUrlShape(rawUrl, config.webhookAllowPrivate);
  } catch (e) {
    if (e instanceof DestinationError) throw new UsageError(e.message);
    throw e;
  }
  const tickers = checkTickers(option('tickers'));
  const minRelevance = checkRelevance(option('min-relevance'), tickers);
  const secret = newSecret();
  const e = await withStore(config, async (store) => {
    const now = Date.now();
    const account = await store.accounts.getAccount(accountId);
    if (!account) throw new CliError(`no account "${accountId}" (fns accounts show <id>, fns keys list)`);
    const tier = webhookTier(account, now);
    if (tickers && !planOf(tier).tickers)
      throw new CliError(
        `--tickers is available to max accounts only (as the stream's ticker filter); account ${accountId} is on ${tier}`,
      );
    await destination(url, config);
    const sealed = new SecretBox(config.webhookSecretsKey).seal(secret);
    return store.webhooks.add(
      { id: newEndpointId(), accountId, url: url.href, tickers, minRelevance, secret: sealed },
      now,
    );
  });
  print(
    {
      id: e.id,
      secret,
      account_id: e.accountId,
      url: e.url,
      tickers: e.tickers,
      min_relevance: relevanceShown(e),
      state: e.state,
    },
    `id:     ${e.id}\nsecret: ${secret}\nurl:    ${printable(e.url)}${e.tickers ? `\ntickers: ${e.tickers.join(',')} (min relevance ${relevanceShown(e)})` : ''}\n(the secret is shown only this once; every article stored from now on is delivered, signed with it)`,
  );
  return EXIT.ok;
}

export async function listWebhooks({ option, config, print }: CommandRun): Promise<number> {
  await withStore(config, async (store) => {
    const now = Date.now();
    const list = await store.webhooks.list(option('account'));
    const latest = await store.articles.latestSeq();
    print({ webhooks: list.map((e) => webhookJson(e, latest, now)) }, webhooksTable(list, latest, now));
  });
  return EXIT.ok;
}

export async function removeWebhook({ args, config, print }: CommandRun): Promise<number> {
  const id = args[0]!;
  if (!(await withStore(config, (store) => store.webhooks.remove(id)))) throw noEndpoint(id);
  print({ id, removed: true }, `${id}: removed (nothing more is sent to it)`);
  return EXIT.ok;
}

export async function pauseWebhook({ args, config, print }: CommandRun): Promise<number> {
  const id = args[0]!;
  await withStore(config, async (store) => {
    const now = Date.now();
    const e = await store.webhooks.setState(id, 'paused', 'paused by an operator (fns webhooks pause)', now);
    if (!e) throw noEndpoint(id);
    print(
      webhookJson(e, await store.articles.latestSeq(), now),
      `${e.id}: paused (articles keep counting in its backlog; fns webhooks resume sends them)`,
    );
  });
  return EXIT.ok;
}

export async function resumeWebhook({ args, config, print }: CommandRun): Promise<number> {
  const id = args[0]!;
  await withStore(config, async (store) => {
    const now = Date.now();
    const before = await existingEndpoint(store, id);
    const account = await store.accounts.getAccount(before.accountId);
    // As send-test: an endpoint whose account is gone is never made active (the dispatcher would pause it again).
    if (!account) throw new CliError(`the account ${before.accountId} of ${id} no longer exists`);
    const tier = webhookTier(account, now);
    // A ticker filter is never dropped to fit a lower plan (the dispatcher would pause it again).
    if (before.tickers !== null && !planOf(tier).tickers) {
      throw new CliError(
        `${before.id} filters by tickers (${before.tickers.join(',')}), available to max accounts only (as the stream's ticker filter); account ${before.accountId} is on ${tier}: fns accounts set-tier ${before.accountId} max, or add an endpoint without --tickers`,
      );
    }
    const e = await store.webhooks.setState(id, 'active', null, now);
    if (!e) throw noEndpoint(id);
    const latest = await store.articles.latestSeq();
    print(
      webhookJson(e, latest, now),
      `${e.id}: active; its backlog of ${backlog(e, latest)} article(s) is sent in order, starting within a few seconds`,
    );
  });
  return EXIT.ok;
}

/** The endpoint's secrets opened: a key problem (WEBHOOK_SECRETS_KEY unset or another) is exit 2, a damaged row 1. */
function openSecrets(id: string, box: SecretBox, sealed: readonly { secret: string }[]): string[] {
  try {
    return sealed.map((s) => box.open(s.secret));
  } catch (err) {
    throw new CliError(`${id}: ${(err as Error).message}`, err instanceof SecretKeyError ? EXIT.usage : EXIT.failed);
  }
}

export async function rotateWebhookSecret({ args, config, print }: CommandRun): Promise<number> {
  const id = args[0]!;
  await withStore(config, async (store) => {
    const now = Date.now();
    const before = await existingEndpoint(store, id);
    const box = new SecretBox(config.webhookSecretsKey);
    // The new secret is sealed with the key the others were: never stored in plain text beside encrypted ones.
    openSecrets(id, box, before.secrets);
    const secret = newSecret();
    const sealed = box.seal(secret);
    const e = await store.webhooks.rotateSecret(id, sealed, now, webhookRules.rotationOverlapMs);
    if (!e) throw noEndpoint(id);
    const until = new Date(now + webhookRules.rotationOverlapMs).toISOString();
    // The previous secrets still valid that the rotation's bound left out: they stop signing now.
    const kept = new Set(e.secrets.map((s) => s.secret));
    const dropped = before.secrets.filter(
      (s) => (s.expiresAt === null || s.expiresAt > now) && !kept.has(s.secret),
    ).length;
    const previous = e.secrets.length - 1;
    print(
      {
        id: e.id,
        secret,
        previous_secrets_valid_until: until,
        previous_secrets_signing: previous,
        previous_secrets_dropped: dropped,
      },
      `id:     ${e.id}\nsecret: ${secret}\n(shown only this once; until ${until} every delivery is signed with the new secret and ${previous === 1 ? 'the previous one' : `the ${previous} previous ones`}, then with the new one only)` +
        (dropped > 0
          ? `\n(the oldest previous secret${dropped === 1 ? '' : `s (${dropped})`} no longer sign${dropped === 1 ? 's' : ''}: at most ${PREVIOUS_SECRETS_MAX} previous secrets sign beside the new one)`
          : ''),
    );
  });
  return EXIT.ok;
}

/** A sample article for `send-test` when the archive is empty. */
function sampleArticle(now: number): StoredArticle {
  const at = new Date(now).toISOString();
  return {
    id: '01JD0Q2V5N8Y3C7KQ4W9M6T1ZB',
    content: 'Test delivery from fns webhooks send-test',
    urgency: 'regular',
    sentiment: null,
    published_at: null,
    received_at: at,
    source: null,
    url: null,
    tickers: [],
  };
}

/** One signed request now, from this process, with the newest article (or a sample); it does not move the cursor. */
export async function sendTestWebhook({ args, config, print }: CommandRun): Promise<number> {
  const id = args[0]!;
  return withStore(config, async (store) => {
    const now = Date.now();
    const e = await existingEndpoint(store, id);
    const account = await store.accounts.getAccount(e.accountId);
    if (!account) throw new CliError(`the account ${e.accountId} of ${id} no longer exists`);
    const tier = webhookTier(account, now);
    const [newest] = await store.articles.list({ afterMs: 0, limit: 1 });
    const article = newest ?? sampleArticle(now);
    const body = webhookBody(article, tier);
    const msgId = messageId(e.id, article.id).replace(/^msg_/, 'msg_test');
    const secrets = openSecrets(id, new SecretBox(config.webhookSecretsKey), signingSecrets(e.secrets, now));
    const url = new URL(e.url);
    const address = await destination(url, config);
    const r = await httpSender({
      url,
      address,
      headers: signedHeaders(secrets, msgId, Math.floor(now / 1000), body),
      body,
      timeoutMs: webhookRules.timeoutMs,
    });
    const ok = r.status !== null && r.status >= 200 && r.status < 300;
    print(
      { id: e.id, webhook_id: msgId, status: r.status, error: r.error, latency_ms: Math.round(r.latencyMs), ok },
      `${e.id}: ${ok ? 'delivered' : 'failed'}: ${r.status === null ? printable(r.error ?? '') : `HTTP ${r.status}`} in ${Math.round(r.latencyMs)} ms (webhook-id ${msgId}${newest ? `, article ${article.id}` : ', a sample article'})${ok || r.status === null ? '' : `\n${printable(r.error ?? '')}`}`,
    );
    return ok ? EXIT.ok : EXIT.failed;
  });
}

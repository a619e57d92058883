/** The contract as data from the bundled specs in generated/: src/ never writes a limit, enum or error text by hand. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { components } from '../../generated/openapi.js';

export type Article = components['schemas']['Article'];
export type TickerSentiment = components['schemas']['TickerSentiment'];
export type Urgency = components['schemas']['Urgency'];
export type ArticleSentiment = components['schemas']['ArticleSentiment'];
export type TickerSentimentLabel = components['schemas']['TickerSentimentLabel'];
export type Tier = components['schemas']['Tier'];
export type Usage = components['schemas']['Usage'];
export type NewsList = components['schemas']['NewsList'];
export type SearchResults = components['schemas']['SearchResults'];
export type Problem = components['schemas']['Problem'];

export const openapiPath = fileURLToPath(new URL('../../generated/openapi.json', import.meta.url));
export const asyncapiPath = fileURLToPath(new URL('../../generated/asyncapi.json', import.meta.url));

/** The bundled OpenAPI document (a fresh copy: validators may annotate what they are given). */
export function openapiDocument(): any {
  return JSON.parse(readFileSync(openapiPath, 'utf8'));
}
const openapi = openapiDocument();
const asyncapi = JSON.parse(readFileSync(asyncapiPath, 'utf8'));

export interface Plan {
  paid: boolean;
  rateLimit: number;
  lookbackHours: number;
  stream: boolean;
  search: boolean;
  tickers: boolean;
  monthlyPriceUsd?: number;
  annualPriceUsd?: number;
}

export const tiers: readonly Tier[] = openapi.components.schemas.Tier.enum;
export const plans: Readonly<Record<Tier, Plan>> = openapi['x-plans'].tiers;
/** Tiers a key can be given at creation or by set-tier (not `expired`: only cancellation leads there). */
export const assignableTiers: readonly Tier[] = tiers.filter((t) => plans[t].paid || t === 'free');

const xl = openapi['x-limits'];
export const limits = {
  rateWindowMs: xl.rateWindowSeconds * 1000,
  graceWindowMs: xl.graceWindowDays * 24 * 3600 * 1000,
  ipGuard: {
    distinctKeys: xl.ipGuard.distinctKeys as number,
    windowMs: xl.ipGuard.windowSeconds * 1000,
    blockMs: xl.ipGuard.blockSeconds * 1000,
  },
  keyPrefixes: xl.keyPrefixes as { live: string; test: string },
  echoMaxChars: xl.echoMaxChars as number,
  requestHeadMaxBytes: xl.requestHeadMaxBytes as number,
  unavailableRetryAfterSeconds: xl.unavailableRetryAfterSeconds as number,
} as const;

export const urgencies: readonly Urgency[] = openapi.components.schemas.Urgency.enum;
export const articleSentiments: readonly ArticleSentiment[] = openapi.components.schemas.ArticleSentiment.enum;
export const tickerSentiments: readonly TickerSentimentLabel[] = openapi.components.schemas.TickerSentimentLabel.enum;

/** A rule read from the contract; a rule that moved or vanished fails at start, never reads as "anything goes". */
function rule<T>(value: T | undefined, where: string): T {
  if (value === undefined || value === null) throw new Error(`openapi.yaml: ${where} is missing`);
  return value;
}

const articleProps = openapi.components.schemas.Article.properties;
export const articleRules = {
  contentMaxLength: rule<number>(articleProps.content.maxLength, 'Article.content.maxLength'),
  tickersMaxItems: rule<number>(articleProps.tickers.maxItems, 'Article.tickers.maxItems'),
  tickerPattern: new RegExp(
    rule<string>(openapi.components.schemas.Ticker?.pattern, 'components.schemas.Ticker.pattern'),
  ),
};

/** The `min_relevance` a `tickers` filter applies when the request gives none (MinRelevance's default). */
export const minRelevanceDefault = rule<number>(
  operationParameters('listNews').find((p) => p.name === 'min_relevance')?.schema.default,
  'MinRelevance.default',
);

/** The bounds of the `limit` parameter (the same on list and search): the store clamps to them too. */
const listLimitSchema = operationParameters('listNews').find((p) => p.name === 'limit')!.schema;
export const limitBounds = { min: listLimitSchema.minimum as number, max: listLimitSchema.maximum as number };

/** Search pages through the first `searchRankingMax` results: `offset + limit` is at most the largest page. */
const searchLimitSchema = operationParameters('searchNews').find((p) => p.name === 'limit')!.schema;
const searchOffsetSchema = rule<any>(
  operationParameters('searchNews').find((p) => p.name === 'offset')?.schema,
  'SearchOffset',
);
export const searchRankingMax = rule<number>(searchLimitSchema.maximum, 'SearchLimit.maximum');
if (searchOffsetSchema.maximum !== searchRankingMax - 1)
  throw new Error('openapi.yaml: SearchOffset.maximum must be SearchLimit.maximum - 1');

/** The problem bodies of components/examples, by kind. */
const ex = openapi.components.examples;
export const problems = {
  invalidParameter: ex.InvalidParameter.value as Problem,
  invalidApiKey: ex.InvalidApiKey.value as Problem,
  inactiveApiKey: ex.InactiveApiKey.value as Problem,
  maxPlanOnly: ex.MaxPlanOnly.value as Problem,
  rateLimitExceeded: ex.RateLimitExceeded.value as Problem,
  embeddingUnavailable: ex.EmbeddingUnavailable.value as Problem,
  serviceUnavailable: ex.ServiceUnavailable.value as Problem,
  tickerFilterMaxPlanOnly: ex.TickerFilterMaxPlanOnly.value as Problem,
  cursorConflict: ex.CursorConflict.value as Problem,
  offsetPastRanking: ex.OffsetPastRanking.value as Problem,
  relevanceWithoutTickers: ex.RelevanceWithoutTickers.value as Problem,
} as const;
export type ProblemKind = keyof typeof problems;

export type StatusReport = components['schemas']['StatusReport'];
/** The status report examples of the contract (the mock serves them), by name. */
export const statusExamples = {
  operational: ex.StatusOperational.value as StatusReport,
  sourceFailing: ex.StatusSourceFailing.value as StatusReport,
};

export interface ParameterSpec {
  name: string;
  required: boolean;
  schema: any;
}

/** The query parameters of an operation, references resolved. */
export function operationParameters(operationId: string): ParameterSpec[] {
  for (const item of Object.values<any>(openapi.paths)) {
    for (const op of Object.values<any>(item)) {
      if (op.operationId !== operationId) continue;
      return (op.parameters ?? []).map((p: any) => {
        const param = p.$ref ? resolve(p.$ref) : p;
        const schema = param.schema.$ref ? resolve(param.schema.$ref) : param.schema;
        return { name: param.name, required: !!param.required, schema };
      });
    }
  }
  throw new Error(`no operation ${operationId} in openapi.yaml`);
}

function resolve(ref: string): any {
  return ref
    .slice(2)
    .split('/')
    .reduce((n: any, k) => n[k.replace(/~1/g, '/').replace(/~0/g, '~')], openapi);
}

export const stream = asyncapi['x-stream'] as {
  recheckSeconds: number;
  pingIntervalSeconds: number;
  maxBufferedBytes: number;
  connectionsPerAccount: number;
  /** A peer that has not completed a close the server started is cut off after this. */
  closeHandshakeSeconds: number;
  closeCodes: Record<
    | 'invalidKey'
    | 'inactiveKey'
    | 'planRequired'
    | 'secondConnection'
    | 'subscriptionExpired'
    | 'slowConsumer'
    | 'unavailable'
    | 'shuttingDown',
    { code: number; reason: string }
  >;
};
export const streamAddress: string = asyncapi.channels.stream.address;

export type ArticleWebhook = components['schemas']['ArticleWebhook'];

/** The delivery rules of the `article` webhook (`x-webhook-rules` of openapi.yaml). */
const xw = rule<any>(openapi['x-webhook-rules'], 'x-webhook-rules');
export const webhookRules = {
  timeoutMs: rule<number>(xw.timeoutSeconds, 'x-webhook-rules.timeoutSeconds') * 1000,
  retryScheduleMs: rule<number[]>(xw.retryScheduleSeconds, 'x-webhook-rules.retryScheduleSeconds').map(
    (s) => s * 1000,
  ) as readonly number[],
  retryEveryMs: rule<number>(xw.retryEverySeconds, 'x-webhook-rules.retryEverySeconds') * 1000,
  jitterRatio: rule<number>(xw.retryJitterRatio, 'x-webhook-rules.retryJitterRatio'),
  giveUpAfterMs: rule<number>(xw.giveUpAfterHours, 'x-webhook-rules.giveUpAfterHours') * 3600 * 1000,
  toleranceMs: rule<number>(xw.toleranceSeconds, 'x-webhook-rules.toleranceSeconds') * 1000,
  rotationOverlapMs: rule<number>(xw.rotationOverlapHours, 'x-webhook-rules.rotationOverlapHours') * 3600 * 1000,
  bodyMaxBytes: rule<number>(xw.bodyMaxBytes, 'x-webhook-rules.bodyMaxBytes'),
  secretPrefix: rule<string>(xw.secretPrefix, 'x-webhook-rules.secretPrefix'),
  eventType: rule<'article.created'>(xw.eventType, 'x-webhook-rules.eventType'),
  /** The partner mock's public signing secret (docs/mock.md). */
  sandboxSecret: rule<string>(xw.sandboxSecret, 'x-webhook-rules.sandboxSecret'),
} as const;

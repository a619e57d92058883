/**
 * @fns/client: the typed client of the Financial News Service.
 *
 * ```ts
 * import { FnsClient } from '@fns/client';
 * const fns = new FnsClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'fns_test_max' });
 * const { articles } = await fns.listNews({ limit: 10 });
 * for await (const article of fns.stream()) console.log(article.content);
 * ```
 *
 * Types come from the contract (`src/generated/`, written by the service repository's
 * `npm run generate`); the code here is only where behaviour lives.
 */
import {
  getJson,
  getUrl,
  type ListNewsParams,
  type NewsList,
  type RestOptions,
  type SearchNewsParams,
  type SearchResults,
  type StatusReport,
  type Usage,
} from './rest.js';
import { stream, type StreamMessage, type StreamOptions } from './stream.js';

export { FnsProblem, FnsStreamClosed, retryAfterSeconds, type ProblemBody } from './errors.js';
export type {
  Article,
  ListNewsParams,
  NewsList,
  RateLimit,
  RestOptions,
  SearchNewsParams,
  SearchResults,
  StatusReport,
  Usage,
} from './rest.js';
export { reconnectDelayMs, type StreamEvent, type StreamMessage, type StreamOptions } from './stream.js';
export type { components, operations, paths } from './generated/openapi.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyOptions,
  type WebhookHeaders,
  type WebhookMessage,
} from './webhooks.js';

export type ClientOptions = RestOptions;

export class FnsClient {
  constructor(private readonly options: ClientOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    if (!options.apiKey) throw new TypeError('apiKey is required');
  }

  /** `GET /v1/news`: the newest articles within the key's lookback window, newest first. */
  listNews(params: ListNewsParams = {}): Promise<NewsList> {
    return getJson<NewsList>(this.options, '/v1/news', params);
  }

  /**
   * Every page of `GET /v1/news`, following `next`. Without `after`: newest first, back to the start of
   * the key's lookback window. With `after`: oldest first, every article after that id, ending once it
   * has caught up (a page shorter than `limit`); call again with the newest id to poll for more.
   * Each page is one request against the rate limit (set `waitOnRateLimit` to pace long walks).
   */
  async *pages(params: ListNewsParams = {}): AsyncGenerator<NewsList, void, undefined> {
    let page = await this.listNews(params);
    const limit = params.limit ?? 50;
    for (;;) {
      yield page;
      const caughtUp = params.after !== undefined && page.count < limit;
      if (!page.next || caughtUp || page.count === 0) return;
      page = await getUrl<NewsList>(this.options, page.next);
    }
  }

  /**
   * Every article after `after`, oldest first, across as many pages as it takes: the gap-free way to
   * catch up. Remember the last id you processed and pass it next time.
   */
  async *articlesAfter(
    after: string,
    params: Omit<ListNewsParams, 'after' | 'before'> = {},
  ): AsyncGenerator<NewsList['articles'][number], void, undefined> {
    for await (const page of this.pages({ ...params, after })) yield* page.articles;
  }

  /** `GET /v1/news/search`: articles ranked by semantic relevance to `q` (max keys). */
  searchNews(params: SearchNewsParams): Promise<SearchResults> {
    return getJson<SearchResults>(this.options, '/v1/news/search', params);
  }

  /** `GET /v1/account/usage`: the key's tier, rate limit and billing period end. */
  getAccountUsage(): Promise<Usage> {
    return getJson<Usage>(this.options, '/v1/account/usage');
  }

  /** `GET /v1/status`: whether the news is flowing (public: not counted against the key's limit). */
  getServiceStatus(): Promise<StatusReport> {
    return getJson<StatusReport>(this.options, '/v1/status');
  }

  /** The live stream as an async iterable (pro and max); see `StreamOptions`. */
  stream(options: Omit<StreamOptions, 'baseUrl' | 'apiKey'> = {}): AsyncGenerator<StreamMessage, void, undefined> {
    return stream({ ...options, baseUrl: this.options.baseUrl, apiKey: this.options.apiKey });
  }
}

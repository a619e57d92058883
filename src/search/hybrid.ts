/** Hybrid search: keyword and vector rankings fused (./lexical.ts); every page of a query is cut from one ranking. */
import { limitBounds, minRelevanceDefault, searchRankingMax } from '../contract/index.js';
import { clampLimit, isAbout, type StoredArticle } from '../domain/articles.js';
import type { StorePorts } from '../store/ports/index.js';
import { expandQuery, namedFirst } from './expand.js';
import { DEFAULT_FUSION, fuseRankings, type Fusion } from './lexical.js';
import type { Scored } from './rank.js';

/** Paging and filter of one search (GET /v1/news/search `offset`, `tickers`, `min_relevance`). */
export interface SearchOptions {
  offset?: number;
  tickers?: string[];
  /** With `tickers`; the contract's default when absent. */
  minRelevance?: number;
}

export interface HybridOptions {
  /** Fusion of the two rankings (default {@link DEFAULT_FUSION}); `'semantic'` or `'lexical'`: one half only. */
  fusion?: Fusion | 'semantic' | 'lexical';
  /** Which half reads query descriptors as names (./expand.ts: `iphone maker` → Apple). Default `'both'`. */
  descriptors?: 'both' | 'keyword' | 'semantic' | 'none';
}

/** The semantic half's index (src/indexing): brought up to date with the store, then ranked. */
export interface SemanticRanking {
  /** Resolves once the vectors stored so far (by any process) are in the index. */
  refresh(): Promise<void>;
  /** The `k` articles most similar to `query`, best first. */
  nearest(query: Float32Array, k: number): Promise<Scored[]>;
  /** Whether the article is in the index (searchable). */
  has(id: string): boolean;
}

interface Plan {
  size: number;
  offset: number;
  tickers: Set<string> | undefined;
  minRelevance: number | undefined;
  /** The first offset + limit results, or (filtered) the whole window. */
  depth: number;
  /** Each half's candidates: the same for every page of a query. */
  candidates: number;
  keywordQuery: string;
  semanticQuery: string;
  /** What the query described (an article naming it comes first). */
  names: string[];
}

export class HybridSearch {
  constructor(
    private readonly store: Pick<StorePorts, 'articles' | 'vectors'>,
    private readonly embedQuery: (query: string) => Promise<Float32Array>,
    private readonly index: SemanticRanking,
    private readonly options: HybridOptions = {},
  ) {}

  /** Results `offset` to `offset + limit`; with `tickers`, the top `limitBounds.max` filtered, then paged. */
  async search(query: string, limit: number, options: SearchOptions = {}): Promise<StoredArticle[]> {
    const plan = this.plan(query, limit, options);
    return this.page(await this.rank(plan), plan);
  }

  private plan(query: string, limit: number, options: SearchOptions): Plan {
    // As the list store: never more than the contract allows, whatever limit reaches this point.
    const size = clampLimit(limit, limitBounds);
    const offset = Math.max(0, Math.trunc(options.offset ?? 0));
    const tickers = options.tickers && options.tickers.length > 0 ? new Set(options.tickers) : undefined;
    const depth = tickers ? limitBounds.max : clampLimit(offset + size, limitBounds);
    // A fixed candidate count whatever the page, so every page of a query is cut from one fused ranking.
    const candidates = Math.max(depth, searchRankingMax);
    const use = this.options.descriptors ?? 'both';
    const expanded = use === 'none' ? undefined : expandQuery(query);
    return {
      size,
      offset,
      tickers,
      minRelevance: options.minRelevance,
      depth,
      candidates,
      keywordQuery: expanded && use !== 'semantic' ? expanded.keyword : query,
      semanticQuery: expanded && use !== 'keyword' ? expanded.semantic : query,
      names: expanded?.names ?? [],
    };
  }

  private async rank(plan: Plan): Promise<string[]> {
    const fusion = this.options.fusion ?? DEFAULT_FUSION;
    // The keyword half is asked first and answers while the query is being embedded.
    const lexical =
      fusion === 'semantic'
        ? Promise.resolve([])
        : this.store.vectors.lexicalSearch(plan.keywordQuery, plan.candidates);
    lexical.catch(() => {}); // observed below; never an unhandled rejection when the embedding fails first
    // The query is embedded even for 'lexical' (evaluation only): the embedding's failure is a 503 either way.
    const q = await this.embedQuery(plan.semanticQuery);
    await this.index.refresh();
    const semantic =
      fusion === 'lexical' ? [] : await this.index.nearest(q, fusion === 'semantic' ? plan.depth : plan.candidates);
    // Only articles the index holds: searchable once an embedding of this model is stored.
    const keyword = (await lexical).filter((x) => this.index.has(x.id));
    const fused =
      fusion === 'semantic' ? semantic : fusion === 'lexical' ? keyword : fuseRankings(semantic, keyword, fusion);
    return fused.slice(0, plan.depth).map((x) => x.id);
  }

  /** The page's articles: named ones first when the query described something, then the ticker filter. */
  private async page(ranked: string[], plan: Plan): Promise<StoredArticle[]> {
    const { offset, size, tickers, names } = plan;
    if (!tickers && names.length === 0) return this.store.articles.getMany(ranked.slice(offset, offset + size));
    // Both need the whole ranking, read once.
    const byId = new Map((await this.store.articles.getMany(ranked)).map((a) => [a.id, a]));
    let articles = namedFirst(
      ranked.flatMap((id) => byId.get(id) ?? []),
      (a) => a.content,
      names,
    );
    if (tickers) {
      const min = plan.minRelevance ?? minRelevanceDefault;
      articles = articles.filter((a) => isAbout(a, tickers, min));
    }
    return articles.slice(offset, offset + size);
  }
}

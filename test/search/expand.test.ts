import { describe, expect, it } from 'vitest';
import saved from '../../src/enrich/resources/descriptors.json' with { type: 'json' };
import { COMPANIES } from '../../src/enrich/directory.js';
import { expandQuery, namedFirst } from '../../src/search/expand.js';
import { EmbeddingWorker, SemanticIndex } from '../../src/indexing/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { TrigramEmbedder } from '../support/service.js';

describe('a query that describes a company, institution or instrument reaches the articles naming it', () => {
  it('gives the keyword half the names and the semantic half the query with the name in place', () => {
    const e = expandQuery('iphone maker tops forecasts');
    expect(e.found).toEqual([{ descriptor: 'iphone maker', name: 'Apple' }]);
    expect(e.semantic).toBe('Apple tops forecasts');
    expect(e.keyword.startsWith('iphone maker tops forecasts ')).toBe(true);
    expect(e.keyword).toContain('Apple');
  });
  it('reads descriptors whatever their case and hyphens, and drops the article before one', () => {
    expect(expandQuery('The Japanese currency slides').semantic).toBe('yen slides');
    expect(expandQuery('US-Central-Bank holds').found.map((f) => f.name)).toEqual(
      expandQuery('us central bank holds').found.map((f) => f.name),
    );
  });
  it('leaves a query with no descriptor as it is, and matches whole words only', () => {
    expect(expandQuery('Fed raises rates by 25bp')).toEqual({
      keyword: 'Fed raises rates by 25bp',
      semantic: 'Fed raises rates by 25bp',
      found: [],
      names: [],
    });
    expect(expandQuery('big blueberry harvest').found).toEqual([]);
  });
});

describe('the articles naming what the query described come first', () => {
  const texts = [
    'Xiaomi tops forecasts',
    'Apple tops forecasts',
    'Samsung tops forecasts',
    'Pineapple growers beat forecasts',
    'APPLE shares rise',
  ];
  it('moves the articles naming one of the names ahead, keeping the ranking within each group; whole words only', () => {
    expect(namedFirst(texts, (t) => t, ['Apple'])).toEqual([
      'Apple tops forecasts',
      'APPLE shares rise',
      'Xiaomi tops forecasts',
      'Samsung tops forecasts',
      'Pineapple growers beat forecasts',
    ]);
  });
  it('keeps the ranking when there is no name, and reads names with regex characters literally', () => {
    expect(namedFirst(texts, (t) => t, [])).toEqual(texts);
    expect(namedFirst(['A.P. Moller up', 'AxP down'], (t) => t, ['A.P. Moller'])).toEqual([
      'A.P. Moller up',
      'AxP down',
    ]);
  });
  it('gives the expansion every short name of a company', () => {
    expect(expandQuery('iphone maker tops forecasts').names).toContain('Apple');
  });
});

describe('descriptors.json: reviewable and consistent with the directory', () => {
  const entries = Object.entries(saved.descriptors as Record<string, string[]>);
  it('writes each descriptor in lower case, under one name only', () => {
    const owner = new Map<string, string>();
    for (const [name, ds] of entries) {
      for (const d of ds) {
        expect(d, `${name}: ${d}`).toBe(d.toLowerCase());
        expect(owner.get(d), `"${d}" under ${owner.get(d)} and ${name}`).toBeUndefined();
        owner.set(d, name);
      }
    }
  });
  it('keys companies by a name the directory gives them (institutions and instruments by their common name)', () => {
    const directoryNames = new Set(
      [...COMPANIES.values()].flatMap((n) => n.split('|').map((x) => x.replace(/^\?/, '').toLowerCase())),
    );
    const companyKeys = entries.filter(([name]) => directoryNames.has(name.toLowerCase()));
    expect(companyKeys.length).toBeGreaterThan(500);
  });
});

describe('search: a query describing a company ranks the article naming it first', () => {
  it("puts the Apple story above look-alikes that share the query's words", async () => {
    const store = new SqliteStore(':memory:');
    const embedder = new TrigramEmbedder();
    try {
      const texts = [
        'Xiaomi tops forecasts as phone shipments jump',
        'Apple quarterly revenue beats estimates',
        'Samsung tops forecasts on memory chips',
      ];
      await store.articles.insert(
        texts.map((content) => ({
          content,
          urgency: 'regular' as const,
          sentiment: null,
          published_at: null,
          tickers: [],
        })),
        Date.now(),
      );
      await new EmbeddingWorker(store.vectors, embedder).drain();
      const hits = await new SemanticIndex(store, embedder).search('iphone maker tops forecasts', 3);
      expect(hits[0]!.content).toBe('Apple quarterly revenue beats estimates');
      const plain = await new SemanticIndex(store, embedder, { descriptors: 'none' }).search(
        'iphone maker tops forecasts',
        3,
      );
      expect(plain[0]!.content).not.toBe('Apple quarterly revenue beats estimates');
    } finally {
      store.close();
    }
  });
});

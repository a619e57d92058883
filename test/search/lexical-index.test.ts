/**
 * Hybrid search: the keyword index's migration fills it for the articles stored before it (on
 * both engines), the query text is made safe for each engine's syntax, and the two rankings are fused.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseRankings } from '../../src/search/lexical.js';
import {
  affordableTerms,
  fts5Query,
  lexicalTerms,
  MAX_LEXICAL_POSTINGS,
  MAX_LEXICAL_TERMS,
  MAX_TERM_ARTICLES,
  tsQuery,
} from '../../src/store/ports/lexical-query.js';
import { migrate, type PostgresStore } from '../../src/store/postgres/index.js';
import { MIGRATIONS as PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite/index.js';
import { PG_TEST_URL, pgReachable, pgTestStores, sql } from '../support/postgres.js';
import { article } from '../store/ports.suite.js';

describe('lexicalTerms keeps the distinct words that carry meaning', () => {
  it('lower-cases, splits on anything but letters and digits, drops stop-words and repeats', () => {
    expect(lexicalTerms('The Fed raises the rate by 25 bp; FED hikes!')).toEqual([
      'fed',
      'raises',
      'rate',
      '25',
      'bp',
      'hikes',
    ]);
  });
  it('a stop-words-only or punctuation-only query has no term', () => {
    expect(lexicalTerms('the of and to in')).toEqual([]);
    expect(lexicalTerms('?!"*:^-')).toEqual([]);
  });
  it(`keeps at most ${MAX_LEXICAL_TERMS} terms of a 500-character query`, () => {
    const q = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    expect(lexicalTerms(q)).toHaveLength(MAX_LEXICAL_TERMS);
  });
});

describe('affordableTerms bounds the keyword query by the articles it must rank', () => {
  it(`drops terms in no article or in more than ${MAX_TERM_ARTICLES}; keeps query order`, () => {
    expect(affordableTerms(['markets', 'evergrande', 'zzz', 'court'], [MAX_TERM_ARTICLES + 1, 3, 0, 900])).toEqual([
      'evergrande',
      'court',
    ]);
  });
  it(`keeps the rarest terms while their articles add up to at most ${MAX_LEXICAL_POSTINGS}`, () => {
    const n = MAX_TERM_ARTICLES;
    const counts = [n, 5, n, n, n, n];
    const kept = affordableTerms(['a', 'b', 'c', 'd', 'e', 'f'], counts);
    expect(kept).toContain('b');
    expect(kept.length).toBe(1 + Math.floor((MAX_LEXICAL_POSTINGS - 5) / n));
  });
});

describe('the engines see only quoted terms', () => {
  it('FTS5: each term a string, OR between them', () => {
    expect(fts5Query(['opec', 'near'])).toBe('"opec" OR "near"');
    expect(fts5Query(['a"b'])).toBe('"a""b"');
  });
  it('tsquery: each term a quoted lexeme, | between them', () => {
    expect(tsQuery(['gold', 'oil'])).toBe("'gold' | 'oil'");
    expect(tsQuery(["o'x"])).toBe("'o''x'");
  });
});

describe('fuseRankings', () => {
  const sem = [
    { id: 'a', score: 0.9 },
    { id: 'b', score: 0.88 },
    { id: 'c', score: 0.1 },
  ];
  it('weighted: a lexical first place lifts a close semantic second above the first', () => {
    const lex = [{ id: 'b', score: 5 }];
    expect(fuseRankings(sem, lex, { kind: 'weighted', alpha: 0.9 }).map((x) => x.id)).toEqual(['b', 'a', 'c']);
  });
  it('weighted: a lexical hit cannot lift a semantically distant article past a close one at alpha 0.9', () => {
    const lex = [{ id: 'c', score: 5 }];
    expect(fuseRankings(sem, lex, { kind: 'weighted', alpha: 0.9 }).map((x) => x.id)).toEqual(['a', 'b', 'c']);
  });
  it('rrf: an article in both lists beats one in a single list', () => {
    expect(fuseRankings(sem, [{ id: 'c', score: 1 }], { kind: 'rrf', k: 60 }).map((x) => x.id)[0]).toBe('c');
  });
  it('with no lexical hit, the semantic order is kept', () => {
    for (const f of [
      { kind: 'rrf', k: 10 },
      { kind: 'weighted', alpha: 0.9 },
    ] as const)
      expect(fuseRankings(sem, [], f).map((x) => x.id)).toEqual(['a', 'b', 'c']);
  });
  it('equal fused scores: the greater id (the newer ULID) first', () => {
    const tie = fuseRankings([{ id: '01A', score: 1 }], [{ id: '01B', score: 1 }], { kind: 'rrf', k: 10 });
    expect(tie.map((x) => x.id)).toEqual(['01B', '01A']);
  });
});

describe('the SQLite migration fills the keyword index for articles stored before it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fns-lexical-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('a store from before the migration finds its old articles by their words after opening', async () => {
    const file = join(dir, 'fns.sqlite');
    const s = new SqliteStore(file);
    await s.articles.insert(
      [article('Evergrande ordered to liquidate by Hong Kong court'), article('Country Garden misses coupon')],
      Date.now(),
    );
    await s.close();
    // Back to the schema before the keyword index (the migrations after it are applied again: idempotent).
    const db = new Database(file);
    db.exec(
      'DROP TRIGGER article_fts_insert; DROP TRIGGER article_fts_delete; DROP TRIGGER article_fts_update; DROP TABLE article_fts;',
    );
    db.pragma(`user_version = ${MIGRATIONS.findIndex((m) => typeof m === 'string' && m.includes('USING fts5'))}`);
    db.close();
    const again = new SqliteStore(file);
    try {
      const hits = await again.vectors.lexicalSearch('Evergrande liquidation', 5);
      expect((await again.articles.getMany(hits.map((h) => h.id))).map((a) => a.content)).toEqual([
        'Evergrande ordered to liquidate by Hong Kong court',
      ]);
    } finally {
      await again.close();
    }
  });
});

const reachable = await pgReachable();
describe.skipIf(!reachable)('the PostgreSQL migration fills the keyword index for articles stored before it', () => {
  const stores = pgTestStores();
  afterAll(() => stores.cleanup());
  it('the generated tsvector is computed for the rows already stored', async () => {
    const s = (await stores.open()) as PostgresStore;
    try {
      await s.articles.insert(
        [article('Evergrande ordered to liquidate by Hong Kong court'), article('Country Garden misses coupon')],
        Date.now(),
      );
      await sql(`ALTER TABLE ${s.schema}.articles DROP COLUMN search_tsv`);
      // Back to before the keyword index: it and every later migration (idempotent) are applied again.
      const v = PG_MIGRATIONS.findIndex((m) => m.includes('search_tsv')) + 1;
      await sql(`DELETE FROM ${s.schema}.schema_migrations WHERE version >= $1`, [v]);
      expect(await migrate(PG_TEST_URL, s.schema)).toEqual(
        Array.from({ length: PG_MIGRATIONS.length - v + 1 }, (_, i) => v + i),
      );
      const hits = await s.vectors.lexicalSearch('Evergrande liquidation', 5);
      expect((await s.articles.getMany(hits.map((h) => h.id))).map((a) => a.content)).toEqual([
        'Evergrande ordered to liquidate by Hong Kong court',
      ]);
    } finally {
      await s.close();
    }
  });
});

describe(`a word in more than ${MAX_TERM_ARTICLES} articles is left to the semantic half (SQLite)`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'fns-lexical-cap-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('the common word alone finds nothing by keyword; with a rare word, the rare word decides, again and again', async () => {
    const s = new SqliteStore(join(dir, 'fns.sqlite'));
    try {
      await s.articles.insert(
        Array.from({ length: MAX_TERM_ARTICLES + 1 }, (_, i) => article(`Markets update number ${i}`)),
        Date.now(),
      );
      await s.articles.insert([article('Markets shrug off Evergrande liquidation')], Date.now());
      expect(await s.vectors.lexicalSearch('markets', 10)).toEqual([]);
      for (let i = 0; i < 2; i++) {
        const hits = await s.vectors.lexicalSearch('markets Evergrande', 10);
        expect((await s.articles.getMany(hits.map((h) => h.id))).map((a) => a.content)).toEqual([
          'Markets shrug off Evergrande liquidation',
        ]);
      }
    } finally {
      await s.close();
    }
  });
});

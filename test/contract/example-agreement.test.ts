/**
 * One headline, one labelling: an article that appears in several places (the response examples of
 * openapi.yaml, the message examples of asyncapi.yaml, the demo archive fixtures/demo-articles.ndjson as
 * `fns demo` ingests it, derived fields included) carries the same urgency and sentiment everywhere,
 * and the same tickers wherever both places show them. Articles are matched by content, one a prefix of
 * the other at a word boundary (an example may show the headline of a longer fixture), ignoring a
 * `BREAKING:` / `FLASH:` marker.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNdjson } from '../../src/ingest/parse.js';
import { deref, loadYaml, repoRoot } from '../support/specs.js';

interface Placed {
  where: string;
  content: string;
  urgency: unknown;
  sentiment: unknown;
  tickers?: { ticker: string; sentiment: string }[] | undefined;
}

const MIN_MATCH = 20;

function openapiArticles(): Placed[] {
  const openapi = loadYaml('openapi.yaml');
  const out: Placed[] = [];
  for (const item of Object.values<any>(openapi.paths)) {
    for (const op of Object.values<any>(item)) {
      for (const [status, resp] of Object.entries<any>(op.responses)) {
        for (const [mediaType, media] of Object.entries<any>(deref(openapi, resp).content ?? {})) {
          for (const [name, ex] of Object.entries<any>(media.examples ?? {})) {
            const articles = deref(openapi, ex).value?.articles;
            if (!Array.isArray(articles)) continue;
            articles.forEach((a: any, i: number) =>
              out.push({ where: `openapi.yaml ${op.operationId} ${status} ${mediaType} "${name}" [${i}]`, ...a }),
            );
          }
        }
      }
    }
  }
  return out;
}

function asyncapiArticles(): Placed[] {
  const asyncapi = loadYaml('asyncapi.yaml');
  return Object.values<any>(asyncapi.components.messages).flatMap((m) =>
    (m.examples ?? []).map((ex: any) => ({ where: `asyncapi.yaml message example "${ex.name}"`, ...ex.payload })),
  );
}

function fixtureArticles(): Placed[] {
  const file = 'fixtures/demo-articles.ndjson';
  const report = parseNdjson(readFileSync(join(repoRoot, file), 'utf8'));
  expect(report.errors).toEqual([]);
  return report.articles.map((a, i) => ({ where: `${file} article ${i + 1}`, ...a }));
}

const normalise = (content: string) => content.replace(/^\s*(\*+\s*)?(breaking|flash)\s*[:\-–—]\s*/i, '').trim();

/** Same article: one content a prefix of the other, ending at a word boundary of the longer one. */
function sameArticle(a: string, b: string): boolean {
  const [short, long] = [normalise(a), normalise(b)].sort((x, y) => x.length - y.length) as [string, string];
  return (
    short.length >= MIN_MATCH &&
    long.startsWith(short) &&
    (long.length === short.length || /^[\s,.;:!?)]/.test(long.slice(short.length)))
  );
}

const tickerText = (t: Placed['tickers']) =>
  JSON.stringify([...(t ?? [])].sort((x, y) => x.ticker.localeCompare(y.ticker)));

/** Every disagreement between two placings of the same article, and how many pairs were compared. */
function disagreements(placed: Placed[]): { problems: string[]; pairs: number } {
  const problems: string[] = [];
  let pairs = 0;
  for (let i = 0; i < placed.length; i++) {
    for (let j = i + 1; j < placed.length; j++) {
      const [a, b] = [placed[i]!, placed[j]!];
      if (!sameArticle(a.content, b.content)) continue;
      pairs++;
      for (const field of ['urgency', 'sentiment'] as const) {
        if (a[field] !== b[field])
          problems.push(
            `"${normalise(a.content)}": ${field} ${String(a[field])} in ${a.where}, ${String(b[field])} in ${b.where}`,
          );
      }
      if (a.tickers !== undefined && b.tickers !== undefined && tickerText(a.tickers) !== tickerText(b.tickers)) {
        problems.push(
          `"${normalise(a.content)}": tickers ${tickerText(a.tickers)} in ${a.where}, ${tickerText(b.tickers)} in ${b.where}`,
        );
      }
    }
  }
  return { problems, pairs };
}

describe('an article shown in several places is labelled the same in all of them', () => {
  const placed = [...openapiArticles(), ...asyncapiArticles(), ...fixtureArticles()];

  it('openapi.yaml examples, asyncapi.yaml examples and the demo archive agree', () => {
    const { problems, pairs } = disagreements(placed);
    expect(problems).toEqual([]);
    // The examples do show articles of the demo archive: the check compares something.
    expect(pairs).toBeGreaterThan(0);
  });

  it('every asyncapi.yaml example article is an article of the demo archive or of openapi.yaml', () => {
    const others = placed.filter((p) => !p.where.startsWith('asyncapi.yaml'));
    const alone = asyncapiArticles().filter((a) => !others.some((o) => sameArticle(a.content, o.content)));
    expect(alone.map((a) => a.where)).toEqual([]);
  });

  it('catches an example labelled differently from the fixture (the check can fail)', () => {
    const fixture = fixtureArticles().find((a) => a.sentiment === 'hawkish' && a.content.length > MIN_MATCH + 10)!;
    const headline = fixture.content.slice(0, fixture.content.lastIndexOf(' ', MIN_MATCH + 10));
    const example: Placed = {
      where: 'a test example',
      content: headline,
      urgency: fixture.urgency,
      sentiment: 'dovish',
    };
    const { problems } = disagreements([example, fixture]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('sentiment dovish in a test example, hawkish in fixtures/demo-articles.ndjson');
    // A different article sharing only its first words is not the same article.
    expect(sameArticle(`${headline}`, `${headline}x and more`)).toBe(false);
  });
});

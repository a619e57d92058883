/**
 * The team's sentiment corpus (eval/sentiment/*.jsonl, labelling guide in eval/README.md): reading it, its
 * dev/test split and its hash. The split is fixed by the text alone: `test` when the first byte of
 * SHA-256(text) is below 52 (about a fifth), so a line keeps its split whatever file or order it is in.
 * The hash covers every line of every file, so the committed model can say which corpus it was trained on.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CORPUS_DIR = fileURLToPath(new URL('../../eval/sentiment/', import.meta.url));

export type ArticleLabel = 'positive' | 'negative' | 'neutral' | 'hawkish' | 'dovish';
export type TickerLabel = 'positive' | 'negative' | 'neutral';
export const ARTICLE_LABELS: ArticleLabel[] = ['positive', 'negative', 'neutral', 'hawkish', 'dovish'];
export const TICKER_LABELS: TickerLabel[] = ['positive', 'negative', 'neutral'];
export const GENRES = ['press', 'wire', 'central-bank', 'wrap', 'post', 'pair'] as const;
export type Genre = (typeof GENRES)[number];

export interface CorpusItem {
  file: string;
  line: number;
  text: string;
  genre: Genre;
  label: ArticleLabel;
  tickers: Map<string, TickerLabel>;
  split: 'dev' | 'test';
}

export function splitOf(text: string): 'dev' | 'test' {
  return createHash('sha256').update(text).digest()[0]! < 52 ? 'test' : 'dev';
}

/** The corpus files, in name order. */
export function corpusFiles(dir = CORPUS_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
}

/** SHA-256 over each file's name and bytes, in name order. */
export function corpusHash(dir = CORPUS_DIR): string {
  const h = createHash('sha256');
  for (const f of corpusFiles(dir)) h.update(`${f}\n`).update(readFileSync(join(dir, f)));
  return `sha256:${h.digest('hex')}`;
}

/** Every item of the corpus, checked: a malformed line fails with its file and line number. */
export function readCorpus(dir = CORPUS_DIR): CorpusItem[] {
  const out: CorpusItem[] = [];
  const seen = new Map<string, string>();
  for (const file of corpusFiles(dir)) {
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .forEach((raw, i) => {
        if (raw.trim() === '') return;
        const where = `${file}:${i + 1}`;
        let o: Record<string, unknown>;
        try {
          o = JSON.parse(raw) as Record<string, unknown>;
        } catch (e) {
          throw new Error(`${where}: not JSON (${(e as Error).message})`, { cause: e });
        }
        const text = o.text;
        if (typeof text !== 'string' || text.trim() === '')
          throw new Error(`${where}: text must be a non-empty string`);
        if (!GENRES.includes(o.genre as Genre)) throw new Error(`${where}: genre must be one of ${GENRES.join(', ')}`);
        if (!ARTICLE_LABELS.includes(o.label as ArticleLabel))
          throw new Error(`${where}: label must be one of ${ARTICLE_LABELS.join(', ')}`);
        const tickers = new Map<string, TickerLabel>();
        if (o.tickers !== undefined) {
          if (typeof o.tickers !== 'object' || o.tickers === null || Array.isArray(o.tickers))
            throw new Error(`${where}: tickers must be an object`);
          for (const [sym, lab] of Object.entries(o.tickers)) {
            if (!TICKER_LABELS.includes(lab as TickerLabel))
              throw new Error(`${where}: ticker ${sym}: label must be one of ${TICKER_LABELS.join(', ')}`);
            tickers.set(sym, lab as TickerLabel);
          }
        }
        const key = text.trim().toLowerCase();
        const first = seen.get(key);
        if (first !== undefined) return; // a repeated text keeps its first label (the split is the same anyway)
        seen.set(key, where);
        out.push({
          file,
          line: i + 1,
          text,
          genre: o.genre as Genre,
          label: o.label as ArticleLabel,
          tickers,
          split: splitOf(text),
        });
      });
  }
  return out;
}

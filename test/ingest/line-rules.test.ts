/**
 * What a pushed line and an ingested line store obey the rules a polled feed's item obeys (src/ingest/parse.ts,
 * the shared reading of both doors): only the line's own fields are read (`__proto__` is an unknown field),
 * `published_at` is stored as the instant in UTC with milliseconds, and `content` is one line of plain text
 * without control characters. Each rule through both doors: `fns articles ingest` (in-process) and the admin
 * push (its HTTP listener), on an in-memory SQLite store.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../src/cli/operator.js';
import { startAdminServer, type AdminServer } from '../../src/ops/admin.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { feedDate } from '../../src/sources/feed/dates.js';
import { toPlainText } from '../../src/sources/feed/text.js';
import { SourcePoller } from '../../src/sources/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { until } from '../support/wait.js';
import { silentLog } from '../../src/domain/log.js';
import { articleRules } from '../../src/contract/index.js';

const TOKEN = 'test-admin-token-0123456789abcdef';
let store: SqliteStore;
let admin: AdminServer;
let seq = 0;
let pushes = 0;
beforeAll(async () => {
  store = new SqliteStore(':memory:');
  admin = await startAdminServer({
    port: 0,
    checks: [],
    metrics: createMetrics({ defaultMetrics: false }),
    log: silentLog,
    push: { token: TOKEN, store: store.sources, clock: Date.now },
  });
});
afterAll(async () => {
  await admin.close();
  await store.close();
});

/** What one door answers for one line: the stored article, or the error. */
type Outcome = { content: string; published_at: string | null } | { error: string };

/** `line` (raw JSON text) through `fns articles ingest`. */
async function ingested(line: string): Promise<Outcome> {
  const report = await ingest(store.sources, [line], Date.now);
  if (report.errors.length) return { error: report.errors[0]!.error };
  const [a] = await store.articles.getMany(report.ids);
  return { content: a!.content, published_at: a!.published_at };
}

/** `line` (raw JSON text of an object without source and id: they are added) through the admin push. */
async function pushed(line: string, type = 'application/x-ndjson'): Promise<Outcome> {
  const withId = `{"source":"desk","id":"line-${++pushes}",${line.slice(1)}`;
  const res = await fetch(`${admin.url}/admin/v1/articles`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': type },
    body: type === 'application/json' ? `[${withId}]` : `${withId}\n`,
  });
  expect(res.status).toBe(200);
  const r = ((await res.json()) as any).results[0];
  if (r.status === 'invalid') return { error: r.error };
  expect(r.status).toBe('stored');
  const [a] = await store.articles.getMany([r.id]);
  return { content: a!.content, published_at: a!.published_at };
}

const DOORS = { 'fns articles ingest': ingested, 'the admin push': pushed } as const;
/** A headline of its own per line, so no line is a duplicate of another. */
const story = () => `Acme wins order number ${++seq}`;

describe('`__proto__` in a line is an unknown field, refused by its name, and nothing inside it is read', () => {
  for (const [door, send] of Object.entries(DOORS)) {
    it(`${door}: refused by name whether it holds the content, other fields or nothing`, async () => {
      const before = await store.articles.count();
      expect(await send('{"__proto__":{"content":"merged from __proto__"}}')).toEqual({
        error: 'unknown field(s): __proto__',
      });
      expect(
        await send(`{"content":"${story()}","__proto__":{"urgency":"breaking","published_at":"2026-11-21T10:00:00Z"}}`),
      ).toEqual({ error: 'unknown field(s): __proto__' });
      expect(await send(`{"content":"${story()}","__proto__":null}`)).toEqual({ error: 'unknown field(s): __proto__' });
      expect(await send(`{"content":"${story()}","constructor":{"prototype":{"x":1}}}`)).toEqual({
        error: 'unknown field(s): constructor',
      });
      expect(await store.articles.count()).toBe(before);
    });
  }
  it('the admin push: a JSON array body too', async () => {
    expect(await pushed('{"__proto__":{"content":"merged from __proto__"}}', 'application/json')).toEqual({
      error: 'unknown field(s): __proto__',
    });
  });
  it('the admin push: `title` and `summary` beside it are not enough to take it in', async () => {
    expect(await pushed(`{"title":"${story()}","__proto__":{"content":"merged"}}`)).toEqual({
      error: 'unknown field(s): __proto__',
    });
  });
});

describe('published_at is stored as a feed stores its dates: the instant in UTC with milliseconds', () => {
  /** Written as the line gives it → stored. */
  const NORMALISED: [string, string][] = [
    ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21t10:00:00z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T12:00:00+02:00', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T05:30:00-04:30', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T10:00:00.123456789Z', '2026-11-21T10:00:00.123Z'],
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2016-12-31t23:59:60.5z', '2017-01-01T00:00:00.500Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59+23:59', '9999-12-31T00:00:59.000Z'],
  ];
  /** Instants outside the years 0001-9999 in UTC: no RFC 3339 spelling, refused. */
  const OUT_OF_RANGE = [
    '9999-12-31T23:59:60Z',
    '9999-12-31T23:30:00-01:00',
    '0001-01-01T00:00:00+00:01',
    '0000-06-01T00:00:00Z',
  ];

  for (const [door, send] of Object.entries(DOORS)) {
    it(`${door}: every spelling of an instant is stored as the feeds store it`, async () => {
      for (const [written, stored] of NORMALISED) {
        expect(feedDate(written), written).toBe(stored);
        expect(await send(`{"content":"${story()}","published_at":"${written}"}`), written).toMatchObject({
          published_at: stored,
        });
      }
    });
    it(`${door}: an instant outside the years 0001-9999 in UTC is refused, saying so`, async () => {
      for (const written of OUT_OF_RANGE) {
        expect(feedDate(written), written).toBeNull();
        expect(await send(`{"content":"${story()}","published_at":"${written}"}`), written).toEqual({
          error: 'published_at must fall within the years 0001-9999 in UTC',
        });
      }
    });
  }
});

describe("content's length is counted in characters, as the contract's maxLength counts them (an emoji is one)", () => {
  const max = articleRules.contentMaxLength;
  for (const [door, send] of Object.entries(DOORS)) {
    it(`${door}: stores content of maxLength characters written outside the BMP, refuses one more`, async () => {
      const head = `${story()} `;
      const fill = '\u{1F4C8}'.repeat(max - Array.from(head).length);
      expect(await send(JSON.stringify({ content: `${head}${fill}` }))).toMatchObject({ content: `${head}${fill}` });
      expect(await send(JSON.stringify({ content: `${story()} ${fill}\u{1F4C8}` }))).toEqual({
        error: `content is longer than ${max} characters`,
      });
    });
  }
});

describe('content keeps one rule for control characters, whichever door it comes in by', () => {
  /**
   * ESC sequences (colour, clear screen, a title set by OSC), CR LF, TAB, BEL, BS, DEL, C1 (CSI, NEL), VT, FF, U+FFFE.
   */
  const RAW =
    'Acme \u001b[31mbeats\u001b[0m estimates\r\nfns: forged\u001b]0;title\u0007 \u001b[2J\u0008\u007f\u009b31m\u0085\u000b\u000c\ufffe\tdone';
  const STORED = 'Acme [31mbeats[0m estimates fns: forged]0;title [2J31m done';

  it('the rule is the feed’s: a feed title with these characters reads so', () => {
    expect(toPlainText(RAW)).toBe(STORED);
  });
  for (const [door, send] of Object.entries(DOORS)) {
    it(`${door}: content with terminal escapes, line breaks and C0/C1 controls is stored as a feed's title`, async () => {
      seq++;
      expect(await send(JSON.stringify({ content: `${RAW} ${seq}` }))).toMatchObject({ content: `${STORED} ${seq}` });
    });
    it(`${door}: content of control characters only is no content`, async () => {
      expect(await send(JSON.stringify({ content: '\u001b\u0007\r\n\u009b' }))).toEqual({
        error: 'content is required and must be a non-empty string',
      });
    });
  }
  it('the admin push: a title or summary standing for the content too', async () => {
    seq++;
    expect(await pushed(JSON.stringify({ title: `${RAW} ${seq}` }))).toMatchObject({ content: `${STORED} ${seq}` });
    seq++;
    expect(await pushed(JSON.stringify({ summary: `${RAW} ${seq}` }))).toMatchObject({ content: `${STORED} ${seq}` });
  });

  it('a polled feed item with the same title (JSON Feed carries any control character) is stored the same', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/feed+json' }).end(
        JSON.stringify({
          version: 'https://jsonfeed.org/version/1.1',
          title: 't',
          items: [{ id: 'c-1', title: `${RAW} feed`, date_published: '2016-12-31T23:59:60Z' }],
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const own = new SqliteStore(':memory:');
    await own.sources.add(
      {
        name: 'wire',
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        everyMs: 60_000,
        urgency: 'auto',
      },
      Date.now(),
    );
    const poller = new SourcePoller({
      store: own.sources,
      tickMs: 50,
      registryCheckMs: 50,
      http: { timeoutMs: 2000, connectTimeoutMs: 1000 },
      allowPrivate: true,
      log: silentLog,
    });
    try {
      await poller.start();
      await until(async () => (await own.sources.get('wire'))?.lastPollAt != null, 'a poll');
      expect((await own.sources.get('wire'))?.lastError).toBeNull();
      const [a] = await own.articles.list({ afterMs: 0, limit: 1 });
      expect(a).toMatchObject({ content: `${STORED} feed`, published_at: '2017-01-01T00:00:00.000Z' });
    } finally {
      await poller.stop();
      await own.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

/**
 * Push: POST /admin/v1/articles on the admin listener of the composed service (SQLite), and the admin
 * server's own rules (token, types, sizes, per-line answers, the stored-articles callback).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/cli/operator.js';
import { articleRules } from '../../src/contract/index.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { startAdminServer, type AdminServer } from '../../src/ops/admin.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { PUSH_MAX_BYTES, PUSH_MAX_LINES } from '../../src/ops/push.js';
import { livePrefix, startService, type RunningService } from '../../src/server/index.js';
import { sqliteFile } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { TrigramEmbedder } from '../support/service.js';
import { connect, dropClients } from '../stream/support.js';
import { silentLog } from '../../src/domain/log.js';

const TOKEN = 'test-admin-token-0123456789abcdef';
const NDJSON = 'application/x-ndjson';

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function push(
  adminUrl: string,
  body: string,
  opts: { type?: string; token?: string | null; method?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'Content-Type': opts.type ?? NDJSON };
  const token = opts.token === undefined ? TOKEN : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(`${adminUrl}/admin/v1/articles`, {
    method: opts.method ?? 'POST',
    headers,
    ...(opts.method === 'GET' ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const line = (o: Record<string, unknown>) => JSON.stringify(o);
const ndjson = (...lines: Record<string, unknown>[]) => lines.map(line).join('\n') + '\n';

/** A chunked POST (no Content-Length) of `size` bytes; the status, or the error when the server cut it first. */
function chunkedPost(url: string, size: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': NDJSON }, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message));
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const write = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

describe('push on the running service: stored articles reach an open stream, idempotent by (source, id)', () => {
  let svc: RunningService;
  let dataDir: string;
  let key: string;
  const logs: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'fns-push-'));
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', ADMIN_TOKEN: TOKEN });
    const store = new SqliteStore(sqliteFile(config));
    key = (await createKey(store.accounts, { tier: 'pro', livePrefix: livePrefix(config), now: Date.now() })).key;
    await store.close();
    // The feed reader's timer is far away: only a wake-up delivers within the test's time.
    svc = await startService(config, {
      log: (m) => void logs.push(m),
      embedder: new TrigramEmbedder(),
      pollSources: false,
      feedPollMs: 600_000,
    });
  });
  afterEach(() => void dropClients());
  afterAll(async () => {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a pushed article is stored, answered with its id and received_at, and delivered to a stream client', async () => {
    const client = connect(svc.url.replace(/^http/, 'ws') + '/v1/stream', { key });
    await client.opened;
    const answer = await push(
      svc.adminUrl!,
      ndjson({
        source: 'desk',
        id: 'n-1',
        content: 'Acme beats estimates',
        url: 'https://desk.example/n-1?utm_source=x',
        urgency: 'flash',
      }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ stored: 1, duplicates: 0, invalid: 0 });
    expect(answer.body.results).toEqual([
      {
        line: 1,
        status: 'stored',
        source: 'desk',
        external_id: 'n-1',
        id: expect.any(String),
        received_at: expect.any(String),
      },
    ]);
    const messages = await client.received(1, 10_000);
    // The stream carries the pushing source and the canonical link (contract 1.2.0).
    expect(messages[0]).toMatchObject({
      id: answer.body.results[0].id,
      content: 'Acme beats estimates',
      urgency: 'flash',
      source: 'desk',
      url: 'https://desk.example/n-1',
    });
    expect(client.invalid).toEqual([]);
  });

  it('the same (source, id) again is a duplicate naming the stored article; the same URL from another source too', async () => {
    const first = await push(
      svc.adminUrl!,
      ndjson({ source: 'desk', id: 'n-2', content: 'Zeta recalls 1m cars', url: 'https://desk.example/n-2' }),
    );
    const id = first.body.results[0].id;
    const again = await push(svc.adminUrl!, ndjson({ source: 'desk', id: 'n-2', content: 'Zeta recalls 1m cars' }));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ stored: 0, duplicates: 1, invalid: 0 });
    expect(again.body.results[0]).toEqual({
      line: 1,
      status: 'duplicate',
      source: 'desk',
      external_id: 'n-2',
      reason: 'same-item',
      id,
    });
    const other = await push(
      svc.adminUrl!,
      JSON.stringify([{ source: 'wire', id: 'w-77', title: 'Zeta: recall', url: 'https://desk.example/n-2#top' }]),
      { type: 'application/json' },
    );
    expect(other.body.results[0]).toMatchObject({ status: 'duplicate', reason: 'same-url', id });
    expect((await svc.store.sources.carriersOf(id)).map((c) => c.source)).toEqual(['desk', 'wire']);
  });

  it("one source's same headline and published time under another id is a duplicate (same-headline), answered as every path answers", async () => {
    const first = await push(
      svc.adminUrl!,
      ndjson({ source: 'desk', id: 'h-1', content: 'Gold hits a record high', published_at: '2026-11-21T10:00:00Z' }),
    );
    const id = first.body.results[0].id;
    const again = await push(
      svc.adminUrl!,
      ndjson({
        source: 'desk',
        id: 'h-2',
        content: 'GOLD HITS A RECORD HIGH',
        published_at: '2026-11-21T11:00:00+01:00',
      }),
    );
    expect(again.body.results[0]).toEqual({
      line: 1,
      status: 'duplicate',
      source: 'desk',
      external_id: 'h-2',
      reason: 'same-headline',
      id,
    });
    // The next day's same headline is a new story.
    const tomorrow = await push(
      svc.adminUrl!,
      ndjson({ source: 'desk', id: 'h-3', content: 'Gold hits a record high', published_at: '2026-11-22T10:00:00Z' }),
    );
    expect(tomorrow.body.results[0]).toMatchObject({ status: 'stored' });
  });

  it('the same story reworded by another source within 24 h is merged (src/dedup/near.ts), the source recorded as a carrier', async () => {
    const first = await push(
      svc.adminUrl!,
      ndjson({
        source: 'desk',
        id: 'nv-1',
        content: 'Nvidia shares jump 6% after record data-center revenue beats estimates',
      }),
    );
    const id = first.body.results[0].id;
    const second = await push(
      svc.adminUrl!,
      ndjson({
        source: 'wire',
        id: 'w-nv',
        content: 'NVIDIA stock climbs 6 percent as data center sales top forecasts',
      }),
    );
    expect(second.body.results[0]).toMatchObject({ status: 'duplicate', reason: 'near-duplicate', id });
    expect((await svc.store.sources.carriersOf(id)).map((c) => c.source)).toEqual(['desk', 'wire']);
  });

  it('bad lines are answered one by one with their line number; the good ones are stored', async () => {
    const long = 'x'.repeat(articleRules.contentMaxLength + 1);
    const body = [
      line({ source: 'desk', id: 'ok-1', title: 'Title only story', published_at: '2026-11-21T10:00:00Z' }),
      '{not json',
      '',
      line({ source: 'desk', content: 'no id' }),
      line({ id: 'x', content: 'no source' }),
      line({ source: 'desk', id: 'long', content: long }),
      line({ source: 'desk', id: 'extra', content: 'typo', publishedAt: '2026-11-21T10:00:00Z' }),
      line({ source: 'desk', id: 'url', content: 'bad url', url: 'ftp://x' }),
      line({ source: 'desk', id: 'both', content: 'c', title: 't' }),
      '[1,2]',
    ].join('\n');
    const answer = await push(svc.adminUrl!, body);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ stored: 1, duplicates: 0, invalid: 8 });
    const byLine = Object.fromEntries(answer.body.results.map((r: any) => [r.line, r]));
    expect(byLine[1]).toMatchObject({ status: 'stored', external_id: 'ok-1' });
    expect(byLine[2]).toMatchObject({ status: 'invalid', error: expect.stringMatching(/^not valid JSON/) });
    expect(byLine[3]).toBeUndefined();
    expect(byLine[4].error).toMatch(/^id is required/);
    expect(byLine[5].error).toMatch(/^source is required/);
    expect(byLine[6].error).toBe(`content is longer than ${articleRules.contentMaxLength} characters`);
    expect(byLine[7].error).toMatch(/unknown field\(s\): publishedAt/);
    expect(byLine[8].error).toMatch(/url must be an absolute http\(s\) URL/);
    expect(byLine[9].error).toMatch(/not both/);
    expect(byLine[10].error).toBe('must be a JSON object');
    const [stored] = await svc.store.articles.getMany([byLine[1].id]);
    expect(stored).toMatchObject({ content: 'Title only story', published_at: '2026-11-21T10:00:00.000Z' });
  });

  it('a wrong or missing token is 401 (problem JSON, WWW-Authenticate), nothing stored, the token never logged', async () => {
    const before = await svc.store.articles.count();
    for (const token of ['wrong-token-wrong-token', null, `${TOKEN}x`]) {
      const answer = await push(
        svc.adminUrl!,
        ndjson({ source: 'desk', id: 'nope', content: 'should not be stored' }),
        { token },
      );
      expect(answer.status).toBe(401);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.body).toMatchObject({ status: 401, title: 'Unauthorized' });
    }
    expect(await svc.store.articles.count()).toBe(before);
    expect(logs.join('\n')).not.toContain(TOKEN);
  });

  it('a body that is not NDJSON or JSON at all is 400; another type 415; another method 405', async () => {
    expect((await push(svc.adminUrl!, 'hello\nworld\n')).status).toBe(400);
    expect((await push(svc.adminUrl!, '')).status).toBe(400);
    const notJson = await push(svc.adminUrl!, '{"source":', { type: 'application/json' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.detail).toMatch(/not JSON/);
    expect(
      (await push(svc.adminUrl!, ndjson({ source: 'd', id: '1', content: 'x' }), { type: 'text/plain' })).status,
    ).toBe(415);
    expect(
      (
        await push(svc.adminUrl!, ndjson({ source: 'd', id: '1', content: 'x' }), {
          type: 'application/json; charset=latin1',
        })
      ).status,
    ).toBe(415);
    const get = await push(svc.adminUrl!, '', { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it(`more than ${PUSH_MAX_BYTES} bytes is 413, declared or streamed; more than ${PUSH_MAX_LINES} lines is 400`, async () => {
    const declared = await push(svc.adminUrl!, 'x'.repeat(PUSH_MAX_BYTES + 1));
    expect(declared.status).toBe(413);
    expect(declared.body.detail).toContain(String(PUSH_MAX_BYTES));
    expect(await chunkedPost(`${svc.adminUrl}/admin/v1/articles`, PUSH_MAX_BYTES + 64 * 1024)).toBe(413);
    const lines = Array.from({ length: PUSH_MAX_LINES + 1 }, (_, i) =>
      line({ source: 'bulk', id: `b-${i}`, content: `bulk ${i}` }),
    ).join('\n');
    const many = await push(svc.adminUrl!, lines);
    expect(many.status).toBe(400);
    expect(many.body.detail).toContain(String(PUSH_MAX_LINES));
  });
});

describe('push is off without ADMIN_TOKEN: 404 naming the variable', () => {
  it('answers 404 with a problem that says how to turn it on', async () => {
    const metrics = createMetrics();
    const admin = await startAdminServer({
      port: 0,
      checks: [],
      metrics,
      log: silentLog,
      push: { store: { ingestItems: async () => [] }, clock: Date.now },
    });
    try {
      const answer = await push(admin.url, ndjson({ source: 'd', id: '1', content: 'x' }));
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.body.detail).toContain('ADMIN_TOKEN');
    } finally {
      await admin.close();
    }
  });
});

describe('the admin server tells the service what a push stored (to wake the stream)', () => {
  let admin: AdminServer;
  let dir: string;
  let store: SqliteStore;
  const calls: string[][] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fns-push-cb-'));
    store = new SqliteStore(join(dir, 'fns.sqlite'));
    admin = await startAdminServer({
      port: 0,
      checks: [],
      metrics: createMetrics(),
      log: silentLog,
      push: { token: TOKEN, store: store.sources, clock: Date.now },
      onArticlesStored: (ids) => void calls.push(ids),
    });
  });
  afterAll(async () => {
    await admin.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('calls onArticlesStored with the stored ids only, and not at all when nothing was stored', async () => {
    const a = await push(
      admin.url,
      ndjson(
        { source: 's', id: '1', content: 'First story here' },
        { source: 's', id: '1', content: 'First story here' },
        { source: 's', id: '2', content: 'Second, unrelated item' },
      ),
    );
    expect(a.body.results.map((r: any) => r.status)).toEqual(['stored', 'duplicate', 'stored']);
    expect(calls).toEqual([[a.body.results[0].id, a.body.results[2].id]]);
    await push(admin.url, ndjson({ source: 's', id: '1', content: 'First story here' }));
    expect(calls).toHaveLength(1);
  });
});

describe('ADMIN_TOKEN: at least 16 visible ASCII characters; the error never repeats it', () => {
  it('accepts a good token and refuses a short, spaced or empty one without echoing it', () => {
    expect(loadConfig({ ADMIN_TOKEN: TOKEN }).adminToken).toBe(TOKEN);
    expect(loadConfig({}).adminToken).toBeUndefined();
    for (const bad of ['short-secret', 'has a space in the middle!!']) {
      let err: unknown;
      try {
        loadConfig({ ADMIN_TOKEN: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/ADMIN_TOKEN must be at least 16/);
      expect((err as Error).message).not.toContain(bad);
    }
    expect(() => loadConfig({ ADMIN_TOKEN: '' })).toThrow(/ADMIN_TOKEN is set but empty/);
  });
});

/**
 * The composed service with ADMIN_PORT: metrics after REST requests and stream connections, readiness of
 * its real dependencies, request and stream log lines (fields, request ids) and never a key in any line.
 */
import { connect as netConnect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { limits, stream, streamAddress } from '../../src/contract/index.js';
import { connect, dropClients, newArticle, waitFor } from '../stream/support.js';
import { get } from '../support/service.js';
import { rawGet, startOps, type OpsService } from './support.js';

let ops: OpsService | undefined;
afterEach(async () => {
  dropClients();
  await ops?.close();
  ops = undefined;
});

const wsUrl = (o: OpsService) => `ws://127.0.0.1:${o.port}${streamAddress}`;

async function scrape(o: OpsService): Promise<string> {
  const res = await fetch(`${o.adminUrl}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample, e.g. `fns_http_requests_total{operation="listNews",status="200"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics of the running service', () => {
  it('counts requests, refusals, blocks, streams, deliveries and the embedding queue', async () => {
    ops = await startOps({ keys: { starter: 1, pro: 1 + limits.ipGuard.distinctKeys, free: 1 } });
    const o = ops;
    const starter = o.keys.starter![0]!.key;
    const pro = o.keys.pro![0]!.key;
    // Each client its own address, so that only the block below is a block.
    expect((await get(o.port, '/v1/news', { key: starter, ip: '127.81.0.1' })).status).toBe(200);
    expect((await get(o.port, '/v1/news', { key: starter, ip: '127.81.0.1' })).status).toBe(429);
    expect(
      (await get(o.port, '/v1/news', { key: 'fns_live_not-a-key-at-all-000000000000', ip: '127.81.0.2' })).status,
    ).toBe(401);
    expect((await get(o.port, '/v1/account/usage', { key: pro, ip: '127.81.0.3' })).status).toBe(200);
    expect((await get(o.port, '/nowhere', { ip: '127.81.0.3' })).status).toBe(404);
    // distinctKeys + 1 different keys from one address: one block.
    const usage: Record<number, number> = {};
    for (const k of o.keys.pro!) {
      const status = (await get(o.port, '/v1/account/usage', { key: k.key, ip: '127.80.0.1' })).status;
      usage[status] = (usage[status] ?? 0) + 1;
    }
    expect(usage[200]).toBeLessThan(o.keys.pro!.length);

    const refused = connect(wsUrl(o), { key: o.keys.free![0]!.key, ip: '127.81.0.4' });
    expect((await refused.closed).code).toBe(stream.closeCodes.inactiveKey.code);
    const client = connect(wsUrl(o), { key: pro, ip: '127.81.0.3' });
    await client.opened;
    await waitFor(() => o.svc.stream.connections() === 1, 'admission');
    await o.svc.store.articles.insert(
      [newArticle({ content: 'ECB raises rates' }), newArticle({ content: 'Oil slides' })],
      Date.now(),
    );
    expect(await client.received(2)).toHaveLength(2);

    // The worker embeds meanwhile: the queue only shrinks, so the gauge lies between these two readings.
    const queuedBefore = await o.svc.store.vectors.queueLength();
    const text = await scrape(o);
    const queuedAfter = await o.svc.store.vectors.queueLength();
    expect(sample(text, 'fns_http_requests_total{operation="listNews",status="200"}')).toBe(1);
    expect(sample(text, 'fns_http_requests_total{operation="listNews",status="429"}')).toBe(1);
    expect(sample(text, 'fns_http_requests_total{operation="listNews",status="401"}')).toBe(1);
    expect(sample(text, 'fns_http_requests_total{operation="none",status="404"}')).toBe(1);
    expect(sample(text, 'fns_http_requests_total{operation="getAccountUsage",status="200"}')).toBe(1 + usage[200]!);
    expect(sample(text, 'fns_http_request_duration_seconds_count{operation="listNews"}')).toBe(3);
    expect(text).toMatch(/^fns_http_request_duration_seconds_bucket\{le="0.005",operation="listNews"\} \d+$/m);
    expect(sample(text, 'fns_rate_limit_refusals_total{operation="listNews"}')).toBe(1);
    expect(sample(text, 'fns_ip_blocks_total')).toBe(1);
    expect(sample(text, `fns_stream_refusals_total{code="${stream.closeCodes.inactiveKey.code}"}`)).toBe(1);
    expect(sample(text, 'fns_stream_open_connections')).toBe(1);
    expect(sample(text, 'fns_stream_delivery_lag_seconds_count')).toBe(2);
    expect(sample(text, 'fns_stream_delivery_lag_seconds_sum')).toBeLessThan(5);
    expect(sample(text, 'fns_stream_feed_lag_articles')).toBe(0);
    // The two articles above, embedded by now or still queued: the gauge is the queue as it was on scrape.
    expect(queuedBefore).toBeLessThanOrEqual(2);
    expect(sample(text, 'fns_embedding_queue_length')).toBeLessThanOrEqual(queuedBefore);
    expect(sample(text, 'fns_embedding_queue_length')).toBeGreaterThanOrEqual(queuedAfter);
    expect(sample(text, 'fns_dependency_errors_total{dependency="embedder"}')).toBe(0);
    expect(sample(text, 'fns_shared_state_fallbacks_total{port="rate_limiter"}')).toBe(0);
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('nodejs_eventloop_lag_seconds');

    client.ws.close();
    await waitFor(() => o.svc.stream.connections() === 0, 'close');
    expect(sample(await scrape(o), 'fns_stream_open_connections')).toBe(0);
  });

  it('reports the embedding queue as it is on scrape', async () => {
    ops = await startOps();
    const o = ops;
    await o.svc.worker.stop();
    await o.svc.store.articles.insert([newArticle(), newArticle(), newArticle()], Date.now());
    expect(sample(await scrape(o), 'fns_embedding_queue_length')).toBe(3);
    await o.svc.worker.drain();
    expect(sample(await scrape(o), 'fns_embedding_queue_length')).toBe(0);
  });

  it('counts embedder failures and names the embedder in /readyz', async () => {
    ops = await startOps({ keys: { max: 1 } });
    const o = ops;
    // The search index loads in the background and is a readiness check of its own: wait for it.
    await o.svc.searchReady;
    const ready = await fetch(`${o.adminUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).checks).toMatchObject({ database: { ok: true }, embedder: { ok: true } });

    o.embedder.failing = true;
    const search = await get(o.port, '/v1/news/search?q=rates', { key: o.keys.max![0]!.key });
    expect(search.status).toBe(503);
    expect(sample(await scrape(o), 'fns_dependency_errors_total{dependency="embedder"}')).toBe(1);
  });

  it('is not ready while the embedder fails (first check after start)', async () => {
    ops = await startOps();
    // Only the embedder may fail here: the search index (loading in the background) has loaded first.
    await ops.svc.searchReady;
    ops.embedder.failing = true;
    const res = await fetch(`${ops.adminUrl}/readyz`);
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.failed).toEqual(['embedder']);
    expect(body.checks.database.ok).toBe(true);
  });

  it('has no admin listener without ADMIN_PORT, and the partner port does not serve the admin paths', async () => {
    ops = await startOps({ admin: false });
    expect(ops.svc.adminUrl).toBeUndefined();
    for (const path of ['/metrics', '/healthz', '/readyz']) expect((await get(ops.port, path)).status).toBe(404);
  });
});

describe('the composed service matches paths exactly as the contract writes them', () => {
  it('answers another case or a trailing slash with a 404 naming the path meant, as the bare app does', async () => {
    ops = await startOps({ keys: { max: 1 } });
    const key = ops.keys.max![0]!.key;
    for (const [spelling, meant] of [
      ['/V1/news', '/v1/news'],
      ['/v1/news/', '/v1/news'],
      ['/v1/NEWS/search?q=fed', '/v1/news/search'],
      ['/v1/account/usage/', '/v1/account/usage'],
    ]) {
      const r = await get(ops.port, spelling!, { key });
      expect(r.status, spelling).toBe(404);
      expect(r.headers['content-type']).toBe('application/problem+json');
      expect(r.body.detail).toContain(`did you mean ${meant}?`);
    }
  });
});

describe('an Upgrade other than websocket is ignored: the request is answered as HTTP/1.1', () => {
  it('answers REST requests that offer h2c (curl --http2, Java HttpClient) as without the offer', async () => {
    ops = await startOps({ keys: { max: 1 } });
    const key = ops.keys.max![0]!.key;
    const h2c = { Connection: 'Upgrade, HTTP2-Settings', Upgrade: 'h2c', 'HTTP2-Settings': 'AAMAAABkAARAAAAAAAIAAAAA' };
    const usage = await get(ops.port, '/v1/account/usage', { key, headers: h2c });
    expect(usage.status).toBe(200);
    expect(usage.body.tier).toBe('max');
    const list = await get(ops.port, '/v1/news?limit=0', { key, headers: h2c });
    expect(list.status).toBe(400);
    expect(list.body.detail).toMatch(/^limit must be/);
  });
});

describe('request logs', () => {
  it('writes one line per request with request id, operation, status, latency and key id', async () => {
    ops = await startOps({ keys: { pro: 1 } });
    const o = ops;
    const k = o.keys.pro![0]!;
    const res = await get(o.port, '/v1/news?limit=2', { key: k.key });
    expect(res.status).toBe(200);
    const requestId = res.headers['x-request-id'] as string;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(() => o.records().some((r) => r.request_id === requestId), 'the request line');
    const line = o.records().find((r) => r.request_id === requestId)!;
    expect(line).toMatchObject({
      level: 'info',
      kind: 'request',
      method: 'GET',
      operation: 'listNews',
      status: 200,
      key_id: k.key_id,
    });
    expect(typeof line.latency_ms).toBe('number');
    expect(line.latency_ms).toBeGreaterThan(0);
    expect(line.path).toBeUndefined();
    expect(Date.parse(line.time)).toBeGreaterThan(Date.now() - 60_000);

    const unknown = await get(o.port, '/v1/nothing-here?x=1');
    await waitFor(() => o.records().some((r) => r.request_id === unknown.headers['x-request-id']), 'the 404 line');
    const nf = o.records().find((r) => r.request_id === unknown.headers['x-request-id'])!;
    expect(nf).toMatchObject({ operation: null, status: 404, path: '/v1/nothing-here' });
    expect(nf.key_id).toBeUndefined();
  });

  it('keeps a short, plain X-Request-Id and replaces any other', async () => {
    ops = await startOps({ keys: { pro: 1 } });
    const o = ops;
    const key = o.keys.pro![0]!.key;
    const ok = await get(o.port, '/v1/account/usage', { key, headers: { 'X-Request-Id': 'lb-7f3a.42:9_x' } });
    expect(ok.headers['x-request-id']).toBe('lb-7f3a.42:9_x');
    await waitFor(() => o.records().some((r) => r.request_id === 'lb-7f3a.42:9_x'), 'the line with the incoming id');

    // A client that puts its key (or anything shaped like one, any brand, any case) there: never echoed, never logged.
    const keyLike = [key, `req-${key}`, 'Xfns_live_abcdefgh', 'acme_TEST_0123456789', 'fns_test_x'];
    const bad = [
      'a'.repeat(65),
      'abc\tdef',
      'two words',
      '"},{"injected":true',
      'x'.repeat(10_000),
      '../../etc/passwd%0a',
      ...keyLike,
    ];
    for (const value of bad) {
      const res = await rawGet(`http://127.0.0.1:${o.port}/v1/account/usage`, {
        'X-API-Key': key,
        'X-Request-Id': value,
      });
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    // Bytes no HTTP client library would send (obs-text), over a raw socket.
    const raw = await new Promise<string>((resolve, reject) => {
      const s = netConnect(o.port, '127.0.0.1', () => {
        s.write(
          Buffer.concat([
            Buffer.from('GET /v1/account/usage HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Request-Id: ab'),
            Buffer.from([0xc3, 0xa9, 0xff]),
            Buffer.from('cd\r\n\r\n'),
          ]),
        );
      });
      let out = '';
      s.on('data', (d) => (out += d.toString('latin1')));
      s.on('end', () => resolve(out));
      s.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 401 /);
    expect(raw).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    await waitFor(
      () => o.records().filter((r) => r.kind === 'request').length === 2 + bad.length,
      'every request line',
    );
    for (const line of o.lines) {
      expect(line).not.toContain('injected');
      expect(line).not.toContain('passwd');
      for (const k of keyLike) expect(line.toLowerCase()).not.toContain(k.toLowerCase());
      expect(line).not.toContain('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    }
  });

  it('writes stream connection events: open, close with code, refused with code and reason', async () => {
    ops = await startOps({ keys: { pro: 1 } });
    const o = ops;
    const k = o.keys.pro![0]!;
    const connectedAt = performance.now();
    const first = connect(wsUrl(o), { key: k.key });
    await first.opened;
    await waitFor(() => o.svc.stream.connections() === 1, 'admission');
    const admittedBy = Date.now();
    const second = connect(wsUrl(o), { key: k.key });
    expect((await second.closed).code).toBe(stream.closeCodes.secondConnection.code);
    const closedFrom = Date.now();
    first.ws.close(1000);
    await first.closed;
    const heldMs = performance.now() - connectedAt;
    await waitFor(() => o.records().some((r) => r.kind === 'stream' && r.event === 'close'), 'the close line');
    const events = o.records().filter((r) => r.kind === 'stream');
    const open = events.find((e) => e.event === 'open')!;
    expect(open).toMatchObject({ account_id: k.account_id, key_id: k.key_id });
    expect(open.connection_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(events.find((e) => e.event === 'refused')).toMatchObject({
      code: stream.closeCodes.secondConnection.code,
      reason: stream.closeCodes.secondConnection.reason,
    });
    const close = events.find((e) => e.event === 'close')!;
    expect(close).toMatchObject({ connection_id: open.connection_id, code: 1000, key_id: k.key_id });
    // How long the connection was open, as the service measured it (Date.now, in this process): at least
    // from when this test saw it admitted to when it closed it, at most the time this test held it.
    expect(close.duration_ms).toBeGreaterThanOrEqual(closedFrom - admittedBy);
    expect(close.duration_ms).toBeLessThanOrEqual(Math.ceil(heldMs));
  });
});

describe('no log line ever contains a key', () => {
  it('REST and stream, valid and invalid keys, header and query, in paths too', async () => {
    ops = await startOps({ keys: { starter: 2, pro: 2, max: 1, free: 1 } });
    const o = ops;
    const valid = Object.values(o.keys)
      .flat()
      .map((k) => k.key);
    // Well-formed keys that were never issued.
    const invalid = [
      'fns_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'fns_live_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz',
      'fns_test_0123456789abcdefghijABCDEFGHIJ',
    ];
    const all = [...valid, ...invalid];
    /** Connects, waits until the service has decided, closes. */
    const streamOnce = async (opts: Parameters<typeof connect>[1]) => {
      const c = connect(wsUrl(o), opts);
      await c.opened.catch(() => {});
      await waitFor(() => o.svc.stream.connections() > 0 || c.closeEvent !== undefined, 'admission');
      c.ws.close();
      await c.closed;
      await waitFor(() => o.svc.stream.connections() === 0, 'the close');
    };
    for (const [i, key] of all.entries()) {
      // Every key from its own address: the IP guard lets the valid ones in.
      const ip = `127.82.0.${i + 1}`;
      await get(o.port, '/v1/news', { key, ip });
      await get(o.port, '/v1/news/search?q=rates', { key, ip });
      await get(o.port, '/v1/account/usage', { key, ip });
      await get(o.port, `/v1/news?api_key=${key}`, { ip });
      await get(o.port, `/v1/keys/${key}`, { ip });
      await streamOnce({ key, ip });
      await streamOnce({ headerKey: key, ip });
    }
    // A free-text line carrying a key (e.g. an error message quoting a URL) is scrubbed as well.
    o.svc.logger.log(`stream: admission failed for ${streamAddress}?api_key=${valid[0]}`);
    await waitFor(() => o.records().filter((r) => r.kind === 'request').length >= all.length * 5, 'every request line');
    await waitFor(
      () => o.records().filter((r) => r.kind === 'stream' && r.event !== 'open').length >= all.length * 2,
      'every stream line',
    );
    const records = o.records();
    // Admitted requests and streams were logged with their key ids: the keys were really used.
    for (const k of [...o.keys.pro!, ...o.keys.max!]) {
      expect(records.some((r) => r.kind === 'request' && r.status === 200 && r.key_id === k.key_id)).toBe(true);
      expect(records.some((r) => r.kind === 'stream' && r.event === 'open' && r.key_id === k.key_id)).toBe(true);
    }
    const text = o.lines.join('');
    for (const key of all) {
      expect(text).not.toContain(key);
      // Nor a long piece of one.
      expect(text).not.toContain(key.slice(-20));
    }
    expect(text.toLowerCase()).not.toContain('x-api-key');
    expect(text).toContain('[key redacted]');
  });
});

describe('startService with only options.log', () => {
  it("gives every line to log as JSON: the requests and the service's own lines, with their component", async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadConfig } = await import('../../src/config/index.js');
    const { startService } = await import('../../src/server/index.js');
    const { TrigramEmbedder } = await import('../support/service.js');
    const dir = mkdtempSync(join(tmpdir(), 'fns-ops-'));
    const logs: string[] = [];
    const svc = await startService(loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', TRUST_PROXY: 'true' }), {
      log: (m) => logs.push(m),
      embedder: new TrigramEmbedder(),
    });
    try {
      const res = await fetch(`${svc.url}/v1/news`, { headers: { 'X-Request-Id': 'plain-log-1' } });
      expect(res.status).toBe(401);
      await waitFor(() => logs.some((l) => l.includes('plain-log-1')), 'the request line');
      const warning = logs.map((l) => JSON.parse(l)).find((l) => l.component === 'config');
      expect(warning?.msg).toMatch(/^TRUST_PROXY=true/);
      const line = JSON.parse(logs.find((l) => l.includes('plain-log-1'))!);
      expect(line).toMatchObject({ kind: 'request', request_id: 'plain-log-1', operation: 'listNews', status: 401 });
      expect(line.key_id).toBeUndefined();
    } finally {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

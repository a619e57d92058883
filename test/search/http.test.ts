import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddingUnavailableError } from '../../src/search/embedder.js';
import { createHttpEmbedder } from '../../src/search/http.js';

// A real OpenAI-compatible endpoint on 127.0.0.1; each test sets how it answers.
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
interface Seen {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}
let server: Server;
let url: string;
let handler: Handler;
let seen: Seen[];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method, path: req.url, headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  handler = () => {
    throw new Error('no handler set');
  };
});

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

/** Answers like OpenAI, with the items in reverse order and vectors of length `scale`: [scale·(i+1), 0, scale]. */
const openAiLike =
  (scale = 5): Handler =>
  (_req, body, res) => {
    const { input } = JSON.parse(body) as { input: string[] };
    const data = input
      .map((_, i) => ({ object: 'embedding', index: i, embedding: [scale * (i + 1), 0, scale] }))
      .reverse();
    json(res, 200, { object: 'list', data, model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } });
  };

describe('the HTTP embedder sends an OpenAI-compatible request', () => {
  it('POSTs {model, input} as JSON with the bearer key, and names its model', async () => {
    handler = openAiLike();
    const embedder = createHttpEmbedder({ url, model: 'text-embedding-3-small', apiKey: 'sk-test', timeoutMs: 5000 });
    expect(embedder.modelId).toBe('openai-compatible:text-embedding-3-small');
    await embedder.embed(['Fed raises interest rates', 'oil prices jump']);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('POST');
    expect(seen[0]!.path).toBe('/v1/embeddings');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(JSON.parse(seen[0]!.body)).toEqual({
      model: 'text-embedding-3-small',
      input: ['Fed raises interest rates', 'oil prices jump'],
    });
  });

  it('sends no Authorization header without a key', async () => {
    handler = openAiLike();
    await createHttpEmbedder({ url, model: 'm', timeoutMs: 5000 }).embed(['x']);
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('makes no request for no texts', async () => {
    expect(await createHttpEmbedder({ url, model: 'm' }).embed([])).toEqual([]);
    expect(seen).toHaveLength(0);
  });

  it('splits a large call into sequential requests of maxBatchSize, keeping the order', async () => {
    handler = (_req, body, res) => {
      const { input } = JSON.parse(body) as { input: string[] };
      json(res, 200, { data: input.map((t, index) => ({ index, embedding: [Number(t), 1] })) });
    };
    const out = await createHttpEmbedder({ url, model: 'm', maxBatchSize: 2 }).embed(['1', '2', '3', '4', '5']);
    expect(seen.map((s) => (JSON.parse(s.body) as { input: string[] }).input)).toEqual([['1', '2'], ['3', '4'], ['5']]);
    out.forEach((vec, i) => expect(vec[0]! / vec[1]!).toBeCloseTo(i + 1, 5));
  });

  it('uses the fetch it is given', async () => {
    handler = openAiLike();
    const urls: string[] = [];
    const spy: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    await createHttpEmbedder({ url, model: 'm', fetch: spy }).embed(['x']);
    expect(urls).toEqual([url]);
  });
});

describe('the HTTP embedder returns unit vectors in input order', () => {
  it('reorders the data by index and L2-normalises each vector', async () => {
    handler = openAiLike(5);
    const out = await createHttpEmbedder({ url, model: 'm', timeoutMs: 5000 }).embed(['a', 'b', 'c']);
    expect(out).toHaveLength(3);
    out.forEach((vec, i) => {
      expect(vec).toBeInstanceOf(Float32Array);
      expect(Math.hypot(...vec)).toBeCloseTo(1, 6);
      const n = Math.hypot(i + 1, 1);
      expect(vec[0]).toBeCloseTo((i + 1) / n, 6); // item i came back at position 2 - i
      expect(vec[2]).toBeCloseTo(1 / n, 6);
    });
  });
});

describe('the HTTP embedder turns every failure into EmbeddingUnavailableError', () => {
  it.each([500, 503, 429, 401, 404])('HTTP %i', async (status) => {
    handler = (_req, _body, res) => json(res, status, { error: { message: 'upstream trouble' } });
    const err = await createHttpEmbedder({ url, model: 'm', timeoutMs: 5000 })
      .embed(['x'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingUnavailableError);
    expect((err as Error).message).toContain(`HTTP ${status}`);
  });

  it('a server that never answers, after timeoutMs', async () => {
    handler = () => {}; // holds the request open
    const t0 = performance.now();
    const err = await createHttpEmbedder({ url, model: 'm', timeoutMs: 200 })
      .embed(['x'])
      .catch((e: unknown) => e);
    const elapsed = performance.now() - t0;
    expect(err).toBeInstanceOf(EmbeddingUnavailableError);
    expect((err as Error).message).toMatch(/timed out after 200 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(5000);
  });

  it('a server that sends the headers and then stalls the body, after timeoutMs', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data": [');
    };
    const err = await createHttpEmbedder({ url, model: 'm', timeoutMs: 200 })
      .embed(['x'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingUnavailableError);
    expect((err as Error).message).toMatch(/timed out/);
  });

  it('without timeoutMs, still waits for a slow (300 ms) answer', async () => {
    handler = (req, body, res) => setTimeout(() => openAiLike()(req, body, res), 300);
    await expect(createHttpEmbedder({ url, model: 'm' }).embed(['x'])).resolves.toHaveLength(1);
  });

  it('a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await createHttpEmbedder({ url: `http://127.0.0.1:${port}/v1/embeddings`, model: 'm' })
      .embed(['x'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingUnavailableError);
    expect((err as Error).message).toMatch(/request failed/);
  });

  it.each<[string, string]>([
    ['a body that is not JSON', '<html>Bad gateway</html>'],
    ['JSON without data', '{"object": "list"}'],
    ['data that is not an array', '{"data": {"0": [1, 2]}}'],
    ['fewer embeddings than inputs', '{"data": [{"index": 0, "embedding": [1, 0]}]}'],
    ['a repeated index', '{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 0, "embedding": [0, 1]}]}'],
    ['an index out of range', '{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 2, "embedding": [0, 1]}]}'],
    ['a missing index', '{"data": [{"embedding": [1, 0]}, {"embedding": [0, 1]}]}'],
    [
      'an embedding that is not an array',
      '{"data": [{"index": 0, "embedding": "AAAA"}, {"index": 1, "embedding": [0, 1]}]}',
    ],
    ['a non-numeric component', '{"data": [{"index": 0, "embedding": [1, "x"]}, {"index": 1, "embedding": [0, 1]}]}'],
    ['an all-zero vector', '{"data": [{"index": 0, "embedding": [0, 0]}, {"index": 1, "embedding": [0, 1]}]}'],
    ['an empty vector', '{"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": [0, 1]}]}'],
    [
      'vectors of different dimensions',
      '{"data": [{"index": 0, "embedding": [1, 0, 0]}, {"index": 1, "embedding": [0, 1]}]}',
    ],
    ['null', 'null'],
  ])('a malformed body: %s', async (_name, body) => {
    handler = (_req, _b, res) => json(res, 200, body);
    const err = await createHttpEmbedder({ url, model: 'm' })
      .embed(['a', 'b'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingUnavailableError);
  });

  it('a fetch that throws', async () => {
    const broken: typeof fetch = () => Promise.reject(new TypeError('fetch failed'));
    await expect(createHttpEmbedder({ url, model: 'm', fetch: broken }).embed(['x'])).rejects.toBeInstanceOf(
      EmbeddingUnavailableError,
    );
  });
});

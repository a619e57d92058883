import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, EmbeddingUnavailableError } from '../../src/search/index.js';

describe('createEmbedder picks the provider from the config', () => {
  let server: Server;
  let url: string;
  let authorization: string | undefined;
  beforeAll(async () => {
    server = createServer((req, res) => {
      authorization = req.headers.authorization;
      // Slower than the 100 ms timeout below, faster than the 5000 ms default.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [{ index: 0, embedding: [3, 4] }] }));
      }, 300);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('uses the HTTP provider when embeddingsUrl is set, with its model and key', async () => {
    const e = createEmbedder({ embeddingsUrl: url, embeddingsModel: 'nomic-embed-text', embeddingsApiKey: 'k1' });
    expect(e.modelId).toBe('openai-compatible:nomic-embed-text');
    const [v] = await e.embed(['x']);
    expect(Array.from(v!)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect(authorization).toBe('Bearer k1');
    await e.close();
  });

  it('passes timeoutMs to the HTTP provider', async () => {
    const e = createEmbedder({ embeddingsUrl: url, embeddingsModel: 'm', timeoutMs: 100 });
    await expect(e.embed(['x'])).rejects.toBeInstanceOf(EmbeddingUnavailableError);
  });

  it('requires embeddingsModel with embeddingsUrl', () => {
    expect(() => createEmbedder({ embeddingsUrl: url })).toThrow(/embeddingsModel/);
  });

  it.each([{}, { embeddingsUrl: '' }, { embeddingsModel: 'ignored-without-url' }])(
    'uses the local model for %o',
    async (cfg) => {
      const e = createEmbedder(cfg);
      expect(e.modelId).toBe('local:all-MiniLM-L6-v2');
      await e.close();
    },
  );
});

describe('src/search takes its configuration as arguments', () => {
  it('no module reads process.env', () => {
    const dir = new URL('../../src/search/', import.meta.url);
    const files = readdirSync(dir).filter((f) => /\.(ts|mjs)$/.test(f));
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) expect(readFileSync(new URL(f, dir), 'utf8'), f).not.toMatch(/process\.env/);
  });
});

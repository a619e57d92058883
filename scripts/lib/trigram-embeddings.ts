/**
 * A stand-in OpenAI-compatible embeddings endpoint for runs that start real `fns serve` processes (the
 * contract run, the scale-out suites, bench:scale): letter-trigram vectors, deterministic and
 * dependency-free, so no process loads the real model. Texts containing `failOn` get a 500.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TRIGRAM_MODEL = 'trigram-128';

export function trigramVector(text: string): number[] {
  const v = new Array<number>(128).fill(0);
  const s = ` ${text.toLowerCase()} `;
  for (let i = 0; i + 3 <= s.length; i++) {
    let h = 0;
    for (const c of s.slice(i, i + 3)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % 128]! += 1;
  }
  return v;
}

export async function startTrigramEmbeddings(
  opts: { failOn?: string } = {},
): Promise<{ url: string; server: Server; close(): void }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const input: string[] = JSON.parse(body).input;
      if (opts.failOn !== undefined && input.some((t) => t.includes(opts.failOn!))) {
        res.writeHead(500).end('{"error":"outage drill"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: trigramVector(t) })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`;
  return { url, server, close: () => server.close() };
}

/**
 * A loopback webhook receiver for the tests: answers each request as `answer` says (a status, `hang` to
 * never answer, or a status whose body then trickles a byte at a time, never ending), records every
 * request, and lets a test wait for the n-th one.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = number | 'hang' | { trickle: number };

export interface Receiver {
  url: string;
  received: Received[];
  /** How to answer the n-th request (0-based); default 200. */
  answer: (n: number, r: Received) => Answer;
  /** Trickling answers whose connection the sender has closed. */
  trickleClosed: number;
  /** Resolves once `count` requests have been received in all. */
  waitFor(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(answer: (n: number, r: Received) => Answer = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: (r: Received[]) => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const n = received.length;
      received.push(r);
      const a = rec.answer(n, r);
      for (const w of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(received.slice());
      }
      if (a === 'hang') return;
      if (typeof a === 'object') {
        res.writeHead(a.trickle, { 'content-type': 'text/plain' }).write(`answer ${a.trickle} `);
        const drip = setInterval(() => res.write('.'), 20);
        res.on('close', () => {
          clearInterval(drip);
          rec.trickleClosed++;
        });
        return;
      }
      res.writeHead(a, { 'content-type': 'text/plain' }).end(a >= 300 ? `answer ${a}` : 'ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  const rec: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer,
    trickleClosed: 0,
    waitFor(count) {
      if (received.length >= count) return Promise.resolve(received.slice());
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return rec;
}

/**
 * An independent implementation of the Standard Webhooks verification (node:crypto only, nothing from
 * src/): true when one of the `v1` signatures of the header matches the secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
export function independentlyVerified(
  secret: string,
  headers: IncomingHttpHeaders | Record<string, string>,
  body: string,
): boolean {
  const id = String(headers['webhook-id']);
  const ts = String(headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest();
  return String(headers['webhook-signature'])
    .split(' ')
    .some((part) => {
      const [version, sig] = part.split(',');
      if (version !== 'v1' || !sig) return false;
      const got = Buffer.from(sig, 'base64');
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
}

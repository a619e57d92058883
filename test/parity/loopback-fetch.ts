/**
 * A `fetch` that sends from a chosen loopback source address. The real service's IP guard blocks an
 * address after 3 distinct keys in 60 s, so every client of the parity suite gets its own address.
 * (The `undici` package is not installed, so Node's fetch cannot take a `dispatcher` with a
 * `localAddress`; this wraps node:http instead.)
 */
import { request as httpRequest } from 'node:http';

let seq = 0;
/** A fresh loopback address per call: 127.77.x.y (all of 127/8 reaches the loopback interface on Linux). */
export function nextLoopbackAddress(): string {
  seq++;
  return `127.77.${Math.floor(seq / 250) % 250}.${(seq % 250) + 1}`;
}

export function loopbackFetch(localAddress: string): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = input instanceof Request ? input : new Request(input, init);
    const url = new URL(req.url);
    const headers: Record<string, string> = {};
    req.headers.forEach((value, name) => (headers[name] = value));
    const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    return new Promise<Response>((resolve, reject) => {
      const out = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: req.method,
          headers,
          localAddress,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const h = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              if (Array.isArray(value)) for (const v of value) h.append(name, v);
              else if (value !== undefined) h.set(name, value);
            }
            const status = res.statusCode ?? 0;
            const noBody = status === 204 || status === 304 || req.method === 'HEAD';
            resolve(
              new Response(noBody ? null : Buffer.concat(chunks), {
                status,
                statusText: res.statusMessage ?? '',
                headers: h,
              }),
            );
          });
        },
      );
      out.on('error', reject);
      if (body && body.length) out.write(body);
      out.end();
    });
  };
}

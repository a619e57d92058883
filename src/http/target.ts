/**
 * The request target, read one way by the whole process. Pure. The absolute form (RFC 9112 §3.2.2) becomes
 * origin form before routing; paths match exactly, and a misspelt known path is a 404 naming it.
 */

import type { IncomingMessage } from 'node:http';
import { limits } from '../contract/index.js';

/** How much of a client's input a problem `detail` echoes (a 15 KB path is not sent back). */
export const ECHO_MAX_CHARS = limits.echoMaxChars;

/** Client input as echoed in a problem detail: at most ECHO_MAX_CHARS characters, then `…`. */
export function echo(input: string): string {
  const chars = Array.from(input);
  return chars.length <= ECHO_MAX_CHARS ? input : `${chars.slice(0, ECHO_MAX_CHARS).join('')}…`;
}

export type Target = { ok: true; url: string } | { ok: false; detail: string };

/** The origin form of a target, or why it cannot be served (`OPTIONS *`, `CONNECT host:port`, other schemes). */
export function originForm(raw: string | undefined): Target {
  // A fragment is never part of a request (RFC 9110 §7.1): dropped, as a browser would not send it.
  const hash = (raw ?? '').indexOf('#');
  const target = hash === -1 ? (raw ?? '') : (raw ?? '').slice(0, hash);
  if (target.startsWith('/')) return { ok: true, url: target };
  if (/^https?:\/\//i.test(target)) {
    if (!URL.canParse(target)) return { ok: false, detail: `The request target ${echo(target)} is not a valid URL` };
    // The path and query exactly as sent (URL would re-encode them): everything after the authority.
    const afterScheme = target.slice(target.indexOf('//') + 2);
    const pathStart = afterScheme.search(/[/?]/);
    const rest = pathStart === -1 ? '/' : afterScheme.slice(pathStart);
    return { ok: true, url: rest.startsWith('?') ? `/${rest}` : rest };
  }
  return { ok: false, detail: `The request target ${echo(target)} is not supported; send a path such as /v1/news` };
}

export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The known path that `path` misspells (case, slashes, dot segments, `%2F`): a 404 hint only, never routed. */
export function meantPath(path: string, known: Iterable<string>): string | undefined {
  let decoded = path.replace(/%2f/gi, '/');
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    /* keep it as it is */
  }
  const segments: string[] = [];
  for (const s of decoded.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s.toLowerCase());
  }
  const canonical = `/${segments.join('/')}`;
  for (const k of known) if (k.toLowerCase() === canonical && k !== path) return k;
  return undefined;
}

/** Why a request's Host is refused (RFC 9112 §3.2: an HTTP/1.1 request has one; none may have several), or undefined. */
export function hostProblem(
  req: Pick<IncomingMessage, 'httpVersionMajor' | 'httpVersionMinor' | 'headersDistinct'>,
): string | undefined {
  const hosts = req.headersDistinct.host?.length ?? 0;
  if (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1)
    return 'An HTTP/1.1 request must carry a Host header';
  if (hosts > 1) return 'A request must carry one Host header, not several';
  return undefined;
}

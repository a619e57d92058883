import type { components } from './generated/openapi.js';

export type ProblemBody = components['schemas']['Problem'];

/**
 * An error answer of the REST API: the service's RFC 9457 problem, typed. `detail` carries the
 * contract's exact text (e.g. `Invalid API key`, `Rate limit exceeded`), `retryAfterSeconds` the
 * `Retry-After` header when the answer had one (429, an IP block, 503).
 */
export class FnsProblem extends Error implements ProblemBody {
  override readonly name = 'FnsProblem';
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly retryAfterSeconds: number | undefined;

  constructor(body: ProblemBody, retryAfterSeconds?: number) {
    super(`${body.status} ${body.title}: ${body.detail}`);
    this.type = body.type;
    this.title = body.title;
    this.status = body.status;
    this.detail = body.detail;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * Why a stream iterator ended for good: a close code that means "stop" (a bad or inactive key, a plan
 * without streaming, another connection of the account, an expired subscription), or an upgrade answered
 * with an HTTP error that retrying cannot fix.
 */
export class FnsStreamClosed extends Error {
  override readonly name = 'FnsStreamClosed';
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`stream closed with ${code}${reason ? ` ${reason}` : ''}`);
  }
}

/** Parses a `Retry-After` header (delta-seconds or an HTTP date) into seconds from `now`. */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The fuzz properties, shared by the vitest suite (test/fuzz/requests.test.ts: fixed seed) and
 * `npm run fuzz` (scripts/fuzz.ts: random seed, more cases). One in-process test service (in-memory
 * SQLite, FakeClock); each case gets fresh keys and fresh loopback client addresses, so cases do not
 * depend on each other and a shrunk counterexample replays the same way.
 *
 * Properties checked on every response:
 *  1. no 5xx (the embedder is healthy, so not even search's 503);
 *  2. a response of an operation validates against openapi.yaml: status documented for the operation,
 *     exact media type, body schema (src/http/response-check.ts), documented headers (required ones
 *     present, every one matching its schema); problem bodies carry the HTTP status;
 *  3. a response outside any operation (unknown path, other method, malformed request, a 400/404 for
 *     an odd spelling of a path) is a 4xx `application/problem+json` Problem;
 *  4. every way of writing a request line (absolute form, `//`, `%2F`, trailing slash, dot segments,
 *     case, encoded letters, fragment) gets the same answer as the plain path (same status, same 400
 *     detail) or a 400/404 problem; a twin request on the plain path, with a fresh key of the same
 *     state from a fresh address at the same instant, gives the plain answer;
 *  5. every 400 of an operation names a parameter of the request (a prefix is enough for long names);
 *  6. what the contract settles is answered so: an admitted request (not 401/403/429) whose
 *     parameters break the schema is a 400, one whose parameters all meet it is a 200; the key
 *     decides 401/403 before anything else;
 *  7. rate-limit accounting: per key, the admitted counted requests (list and search answers other
 *     than 401/403/429) in any 60 s of the fake clock never exceed the plan's `rateLimit` (from
 *     src/contract `plans`; 0 for keys without a plan), and X-RateLimit-Limit is the plan's. The
 *     rate-limit sequences also check X-RateLimit-Remaining and that a 429 comes only when full.
 */
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { articleRules, limits, openapiDocument, plans, problems, type Tier } from '../../src/contract/index.js';
import { ContractViolation, createResponseCheck } from '../../src/http/response-check.js';
import { LIVE, startTestService, type TestService } from '../support/service.js';
import { deref, openapiAjv } from '../support/specs.js';
import {
  describeCase,
  describeRateCase,
  describeRateStep,
  MALFORMED,
  operationById,
  PROTOTYPE_NAMES,
  originOf,
  renderQuery,
  requestLine,
  type FuzzCase,
  type FuzzRequest,
  type KeyState,
  type OperationSpec,
  type RateCase,
  type RenderedQuery,
} from './arbitraries.js';
import { short } from './arbitraries.js';
import { header, rawRequest, RawHttpError, type RawResponse } from './raw-http.js';

export class FuzzFailure extends Error {
  constructor(
    readonly failureClass: string,
    message: string,
  ) {
    super(`[${failureClass}] ${message}`);
  }
}

export interface Stats {
  cases: number;
  rateCases: number;
  requests: number;
  /** `operationId` (or `unknown path`) → status → count. */
  statuses: Record<string, Record<number, number>>;
  forms: Record<string, number>;
  keyStates: Record<string, number>;
  verdicts: Record<string, number>;
  ipBlocks: number;
  /** How often the checks that compare or predict had something to check. */
  checked: {
    twinComparisons: number;
    expected400: number;
    expected200: number;
    namesParameter: number;
    rateWindowChecks: number;
  };
  rateLimited: number;
  /** Failures of ignored classes (the script's --all-classes mode). */
  ignored: Record<string, number>;
}

const PROBLEM_TYPE = 'application/problem+json';

/** What a check found: `code` goes into the failure class, `text` into the message. */
interface Violation {
  code: string;
  text: string;
}
const MAX_ECHO_PREFIX = 32;
const COUNTED_OPS = new Set(['listNews', 'searchNews']);
/** Operations the contract makes public (`security: []`): no key asked for, none refused, never rate limited. */
const PUBLIC_OPS = new Set(['getServiceStatus']);

function tierOf(state: KeyState): Tier | undefined {
  if (state === 'starter' || state === 'pro' || state === 'max' || state === 'free' || state === 'expired')
    return state;
  return undefined;
}

/** The plan's rate limit for a key state; keys without a plan may never be admitted. */
function planLimit(state: KeyState): number {
  const tier = tierOf(state);
  return tier ? plans[tier].rateLimit : 0;
}

const showResponse = (r: RawResponse) =>
  `${r.statusLine}\n${Object.entries(r.headers)
    .filter(([k]) => k !== 'date')
    .map(([k, v]) => `  ${k}: ${v.join(' | ')}`)
    .join('\n')}\n  body: ${short(r.text)}`;

/** Per case: its keys (created on first use, one per state) and its client addresses. */
interface CaseContext {
  keys: Map<KeyState, string | undefined>;
  stateOfKey: Map<string, KeyState>;
  ips: Map<number, string>;
  /** key → fake-clock times of its admitted counted requests */
  ledger: Map<string, number[]>;
}

export class FuzzHarness {
  readonly stats: Stats = {
    cases: 0,
    rateCases: 0,
    requests: 0,
    statuses: {},
    forms: {},
    keyStates: {},
    verdicts: {},
    ipBlocks: 0,
    checked: { twinComparisons: 0, expected400: 0, expected200: 0, namesParameter: 0, rateWindowChecks: 0 },
    rateLimited: 0,
    ignored: {},
  };
  private ipSeq = 0;
  private unknownSeq = 0;
  private lastSeed = -Infinity;
  private readonly doc = openapiDocument();
  private readonly responseCheck = createResponseCheck();
  private readonly ajv: Ajv2020;
  private readonly headerValidators = new Map<string, (v: unknown) => boolean>();
  /** Failure classes to record and let pass (the script's --all-classes mode); none in the test. */
  ignore: (failureClass: string) => boolean = () => false;

  private constructor(readonly svc: TestService) {
    this.ajv = openapiAjv(this.doc);
  }

  static async start(): Promise<FuzzHarness> {
    const h = new FuzzHarness(await startTestService());
    await h.seedArticles();
    return h;
  }

  async close(): Promise<void> {
    await this.svc.close();
  }

  /** Articles around the fake clock (list answers with content; search finds them), refreshed as the clock runs. */
  private async seedArticles(): Promise<void> {
    const now = this.svc.clock.now;
    if (now - this.lastSeed < 6 * 3600_000) return;
    this.lastSeed = now;
    const ages = [60_000, 3600_000, 5 * 3600_000, 30 * 3600_000, 3 * 24 * 3600_000, 8 * 24 * 3600_000];
    const urgencies = ['breaking', 'flash', 'regular'] as const;
    for (const [i, age] of ages.entries()) {
      await this.svc.ingest(
        [
          {
            content: `Fed raises rates by ${i + 1} basis points; Apple and Nvidia move`,
            urgency: urgencies[i % 3]!,
            sentiment: i % 2 ? 'hawkish' : null,
            published_at: i % 2 ? null : new Date(now - age - 1000).toISOString(),
            tickers: i % 2 ? [] : [{ ticker: 'AAPL', sentiment: 'positive' }],
          },
        ],
        now - age,
      );
    }
    // One whose words and symbols are Object.prototype's names: the generated `q` and `tickers` find it.
    await this.svc.ingest(
      [
        {
          content: `${PROTOTYPE_NAMES.join(' ')} in a headline`,
          urgency: 'regular',
          published_at: new Date(now - 120_000).toISOString(),
          tickers: PROTOTYPE_NAMES.map((n) => n.toUpperCase())
            .filter((t) => articleRules.tickerPattern.test(t))
            .slice(0, articleRules.tickersMaxItems)
            .map((ticker) => ({ ticker, sentiment: 'neutral' as const })),
        },
      ],
      now - 120_000,
    );
    await this.svc.worker.drain();
  }

  private nextIp(): string {
    const n = this.ipSeq++;
    const c = 1 + (n % 254);
    const rest = Math.floor(n / 254);
    return `127.${10 + Math.floor(rest / 256)}.${rest % 256}.${c}`;
  }

  /** A fresh key in `state` (undefined: no key). */
  private async makeKey(state: KeyState): Promise<string | undefined> {
    switch (state) {
      case 'none':
        return undefined;
      case 'unknown':
        return `${LIVE}unknown${++this.unknownSeq}x${Date.now().toString(36)}`;
      case 'sandbox':
        return `${limits.keyPrefixes.test}max`;
      case 'starter':
      case 'pro':
      case 'max':
      case 'free':
        return (await this.svc.key(state)).key;
      case 'expired': {
        const k = await this.svc.key('pro');
        await this.svc.store.accounts.cancel(k.account_id, this.svc.clock.now);
        return k.key;
      }
      case 'deactivated': {
        const k = await this.svc.key('max');
        await this.svc.store.accounts.setKeyActive(k.key_id, false);
        return k.key;
      }
    }
  }

  private fail(failureClass: string, message: string): void {
    if (this.ignore(failureClass)) {
      this.stats.ignored[failureClass] = (this.stats.ignored[failureClass] ?? 0) + 1;
      return;
    }
    throw new FuzzFailure(failureClass, message);
  }

  private headersFor(r: FuzzRequest, key: string | undefined): [string, string][] {
    const h: [string, string][] = [];
    if (r.extra !== 'missingHost') h.push(['Host', `127.0.0.1:${this.svc.port}`]);
    if (key !== undefined || r.keyHeader === 'empty') {
      const k = r.keyHeader === 'empty' ? '' : key!;
      if (r.keyHeader === 'lowerName') h.push(['x-api-key', k]);
      else if (r.keyHeader === 'padded') h.push(['X-API-Key', `  ${k}\t`]);
      else if (r.keyHeader === 'duplicate') h.push(['X-API-Key', k], ['X-API-Key', k]);
      else h.push(['X-API-Key', k]);
    }
    if (r.extra === 'hugeHeader') h.push(['X-Filler', 'f'.repeat(17_000)]);
    h.push(['Connection', 'close']);
    return h;
  }

  private async send(
    r: FuzzRequest,
    key: string | undefined,
    ip: string,
    plain: boolean,
    where: string,
    malformed = false,
  ): Promise<RawResponse> {
    const line = requestLine(r, this.svc.port, plain);
    this.stats.requests++;
    const head = r.method !== 'HEAD' ? false : malformed ? 'either' : true;
    try {
      return await rawRequest({
        port: this.svc.port,
        localAddress: ip,
        requestLine: line,
        headers: this.headersFor(r, key),
        head,
      });
    } catch (err) {
      const cls = err instanceof RawHttpError ? 'transport:unreadable-response' : 'transport:error';
      throw new FuzzFailure(cls, `${where}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private count(bucket: string, status: number): void {
    const m = (this.stats.statuses[bucket] ??= {});
    m[status] = (m[status] ?? 0) + 1;
  }

  // ------------------------------------------------------------------------------------------
  // Checks; each returns a violation or undefined

  private headerValidator(name: string, schema: any): (v: unknown) => boolean {
    let v = this.headerValidators.get(name);
    if (!v) {
      const compiled = this.ajv.compile(schema);
      v = (x) => compiled(x) as boolean;
      this.headerValidators.set(name, v);
    }
    return v;
  }

  /** The response against the operation's documented responses. */
  private operationViolation(op: OperationSpec, res: RawResponse, head: boolean): Violation | undefined {
    const operation = Object.values<any>(this.doc.paths[op.path]).find((o) => o.operationId === op.operationId);
    const documented = deref(this.doc, operation.responses[String(res.status)]);
    if (!documented)
      return { code: 'status-not-documented', text: `status ${res.status} is not documented for ${op.operationId}` };
    const type = header(res, 'content-type') ?? '(none)';
    if (!documented.content?.[type])
      return { code: 'media-type', text: `${op.operationId} ${res.status} does not document media type ${type}` };
    for (const [name, ref] of Object.entries<any>(documented.headers ?? {})) {
      const h = deref(this.doc, ref);
      const values = res.headers[name.toLowerCase()];
      if (!values) {
        if (h.required)
          return {
            code: `header-missing:${name}`,
            text: `${op.operationId} ${res.status} lacks the required header ${name}`,
          };
        continue;
      }
      if (values.length !== 1)
        return { code: `header-repeated:${name}`, text: `header ${name} sent ${values.length} times` };
      const raw = values[0]!;
      const value = h.schema.type === 'integer' ? (/^-?\d+$/.test(raw) ? Number(raw) : raw) : raw;
      if (!this.headerValidator(`${op.operationId} ${res.status} ${name}`, h.schema)(value))
        return {
          code: `header-invalid:${name}`,
          text: `header ${name}: ${JSON.stringify(raw)} does not match its schema`,
        };
    }
    if (head) return undefined;
    if (res.body === undefined) return { code: 'body-not-json', text: `body is not JSON: ${short(res.text, 200)}` };
    try {
      this.responseCheck(op.operationId, res.status, type, res.body);
    } catch (err) {
      if (err instanceof ContractViolation) return { code: 'body-schema', text: err.message };
      throw err;
    }
    if (type === PROBLEM_TYPE && (res.body as any).status !== res.status)
      return {
        code: 'problem-status',
        text: `problem status ${(res.body as any).status} is not the HTTP status ${res.status}`,
      };
    return undefined;
  }

  /** A response outside any operation: a 4xx problem. */
  private genericViolation(res: RawResponse, head: boolean): Violation | undefined {
    if (res.status < 400 || res.status > 499)
      return { code: `status-${res.status}`, text: `status ${res.status} (expected a 4xx problem)` };
    const type = header(res, 'content-type');
    if (type !== PROBLEM_TYPE)
      return { code: 'not-problem-json', text: `media type ${type ?? '(none)'} (expected ${PROBLEM_TYPE})` };
    if (head) return undefined;
    if (res.body === undefined) return { code: 'body-not-json', text: `body is not JSON: ${short(res.text, 200)}` };
    const validate = this.ajv.getSchema('openapi#/components/schemas/Problem')!;
    if (!validate(res.body))
      return { code: 'not-a-problem', text: `not a Problem: ${this.ajv.errorsText(validate.errors)}` };
    if ((res.body as any).status !== res.status)
      return {
        code: 'problem-status',
        text: `problem status ${(res.body as any).status} is not the HTTP status ${res.status}`,
      };
    return undefined;
  }

  /** The 400 of an operation names a parameter of the request (or a required one it lacks). */
  private namesParameter(op: OperationSpec, query: RenderedQuery, detail: unknown): boolean {
    if (typeof detail !== 'string') return false;
    return (
      this.startsWithParameter(op, query, detail) ||
      this.startsWithParameter(op, query, detail.replace(/^["'`\u201c\u2018]/, ''))
    );
  }

  private startsWithParameter(op: OperationSpec, query: RenderedQuery, d: string): boolean {
    const candidates = new Set<string>();
    for (const n of query.names) {
      for (const name of [n.raw, n.decoded]) {
        if (name === undefined) continue;
        candidates.add(name);
        candidates.add(JSON.stringify(name).slice(1, -1));
        const base = name.split(/[[.]/)[0]!;
        if (base !== '') candidates.add(base);
      }
    }
    for (const p of op.params) if (p.required) candidates.add(p.name);
    for (const name of candidates) {
      if (name === '') {
        if (/parameter/.test(d)) return true;
        continue;
      }
      if (d.startsWith(name) && (d.length === name.length || !/[A-Za-z0-9_]/.test(d[name.length]!))) return true;
      let lcp = 0;
      while (lcp < d.length && lcp < name.length && d[lcp] === name[lcp]) lcp++;
      if (lcp >= MAX_ECHO_PREFIX) return true; // a long name, echoed cut short
    }
    return false;
  }

  /**
   * A run of more than `echoMaxChars` characters of client input (target, names, values) inside a
   * problem detail, or undefined. 200 bodies are exempt (search echoes `q` in full by contract).
   */
  private overlongEcho(res: RawResponse, r: FuzzRequest, query: RenderedQuery): string | undefined {
    const detail = (res.body as any)?.detail;
    const cap = limits.echoMaxChars;
    if (typeof detail !== 'string' || detail.length <= cap) return undefined;
    const inputs = [r.target.kind === 'unknownPath' ? r.target.path : '', ...query.inputs].filter(
      (s) => s.length > cap,
    );
    for (let i = 0; i + cap < detail.length; i++) {
      const window = detail.slice(i, i + cap + 1);
      if (inputs.some((s) => s.includes(window))) return window;
    }
    return undefined;
  }

  private isIpBlock(res: RawResponse): boolean {
    return res.status === 403 && header(res, 'retry-after') !== undefined;
  }

  /** Ledger and X-RateLimit-Limit for a response to `key` (counted requests only). */
  private account(
    ctx: CaseContext,
    op: OperationSpec | undefined,
    inOperation: boolean,
    key: string | undefined,
    res: RawResponse,
    where: string,
  ): { counted: boolean; inWindow: number; limit: number } {
    const state = key === undefined ? 'none' : (ctx.stateOfKey.get(key) ?? 'unknown');
    const limit = planLimit(state);
    const now = this.svc.clock.now;
    const hasHeaders = header(res, 'x-ratelimit-limit') !== undefined;
    const counted =
      (op !== undefined && COUNTED_OPS.has(op.operationId) && inOperation && ![401, 403, 429].includes(res.status)) ||
      (hasHeaders && res.status !== 429);
    const ledgerKey = key ?? '(no key)';
    const log = (ctx.ledger.get(ledgerKey) ?? []).filter((t) => t > now - limits.rateWindowMs);
    if (counted) log.push(now);
    ctx.ledger.set(ledgerKey, log);
    if (counted) this.stats.checked.rateWindowChecks++;
    if (counted && log.length > limit) {
      this.fail(
        `rate-limit:over-plan:${state}`,
        `${where}: ${log.length} admitted counted requests within ${limits.rateWindowMs / 1000} s for a ${state} key (plan: ${limit})\n${showResponse(res)}`,
      );
    }
    const limitHeader = header(res, 'x-ratelimit-limit');
    if (limitHeader !== undefined && Number(limitHeader) !== limit) {
      this.fail(
        'rate-limit:limit-header',
        `${where}: X-RateLimit-Limit ${limitHeader} for a ${state} key (plan: ${limit})\n${showResponse(res)}`,
      );
    }
    if (res.status === 429) this.stats.rateLimited++;
    return { counted, inWindow: log.length, limit };
  }

  // ------------------------------------------------------------------------------------------
  // One generated case

  async runCase(c: FuzzCase): Promise<void> {
    this.stats.cases++;
    await this.seedArticles();
    const ctx: CaseContext = { keys: new Map(), stateOfKey: new Map(), ips: new Map(), ledger: new Map() };
    const keyFor = async (state: KeyState) => {
      if (!ctx.keys.has(state)) {
        const k = await this.makeKey(state);
        ctx.keys.set(state, k);
        if (k !== undefined) ctx.stateOfKey.set(k, state);
      }
      return ctx.keys.get(state);
    };
    for (const [i, r] of c.requests.entries()) {
      if (r.advanceMs) this.svc.clock.advance(r.advanceMs);
      const key = await keyFor(r.keyState);
      if (!ctx.ips.has(r.ipSlot)) ctx.ips.set(r.ipSlot, this.nextIp());
      const where = `request ${i + 1} of\n${describeCase(c, i + 1)}\n`;
      await this.checkRequest(ctx, r, key, ctx.ips.get(r.ipSlot)!, where);
    }
  }

  private async checkRequest(
    ctx: CaseContext,
    r: FuzzRequest,
    key: string | undefined,
    ip: string,
    where: string,
  ): Promise<void> {
    const head = r.method === 'HEAD';
    const { query, op } = originOf(r);
    const malformed =
      MALFORMED.has(r.extra) ||
      query.rawBytes ||
      /[^\u0000-\u007f]/.test(r.target.kind === 'unknownPath' ? r.target.path : '');
    const isGet = r.method === 'GET' || r.method === 'HEAD';
    const plain = r.target.kind === 'operation' && r.target.pathForm === 'plain' && r.target.targetForm === 'origin';
    const form =
      r.target.kind === 'unknownPath'
        ? 'unknown path'
        : plain
          ? 'plain'
          : `${r.target.targetForm}+${r.target.pathForm}`;
    this.stats.forms[form] = (this.stats.forms[form] ?? 0) + 1;
    this.stats.keyStates[r.keyState] = (this.stats.keyStates[r.keyState] ?? 0) + 1;
    if (op) this.stats.verdicts[query.verdict.label] = (this.stats.verdicts[query.verdict.label] ?? 0) + 1;

    // The twin: the same request on the plain path, a fresh key of the same state, a fresh address.
    let twin: RawResponse | undefined;
    let twinKey: string | undefined;
    if (op && !plain && isGet && !malformed) {
      twinKey =
        r.keyState === 'none' || r.keyState === 'unknown' || r.keyState === 'sandbox'
          ? key
          : await this.makeKey(r.keyState);
      if (twinKey !== undefined) ctx.stateOfKey.set(twinKey, r.keyState);
      twin = await this.send(r, twinKey, this.nextIp(), true, where);
      this.count(`${op.operationId}`, twin.status);
      await this.checkResponse(ctx, r, op, query, twinKey, twin, {
        head,
        plain: true,
        malformed: false,
        isGet,
        where: `${where}(its twin on the plain path, ${requestLine(r, this.svc.port, true)})`,
      });
    }

    const res = await this.send(r, key, ip, false, where, malformed);
    this.count(
      op && !malformed && isGet
        ? `${op.operationId}${plain ? '' : ' (other spelling)'}`
        : r.target.kind === 'unknownPath'
          ? 'unknown path'
          : malformed
            ? 'malformed request'
            : `${r.method} on a known path`,
      res.status,
    );
    if (this.isIpBlock(res)) this.stats.ipBlocks++;
    await this.checkResponse(ctx, r, op, query, key, res, { head, plain, malformed, isGet, twin, where });
  }

  private async checkResponse(
    ctx: CaseContext,
    r: FuzzRequest,
    op: OperationSpec | undefined,
    query: RenderedQuery,
    key: string | undefined,
    res: RawResponse,
    o: { head: boolean; plain: boolean; malformed: boolean; isGet: boolean; twin?: RawResponse; where: string },
  ): Promise<void> {
    const where = `${o.where}`;
    const show = () => `${where}→ ${showResponse(res)}`;
    if (res.status >= 500) {
      const context = o.malformed
        ? 'malformed'
        : !op
          ? 'unknown-path'
          : !o.isGet
            ? r.method
            : o.plain
              ? 'plain'
              : 'odd-form';
      return this.fail(`5xx:${res.status}:${context}${r.method === 'HEAD' ? ':HEAD' : ''}`, show());
    }
    if (res.trailing > 0) this.fail('framing:bytes-after-response', show());
    if (key !== undefined && key.length > 8 && res.text.includes(key))
      this.fail('key-echoed', `the response body contains the API key\n${show()}`);
    const echoed = this.overlongEcho(res, r, query);
    if (echoed)
      this.fail(
        'echo:over-cap',
        `the body echoes ${echoed.length}+ characters of client input (cap: ${limits.echoMaxChars}): ${short(echoed, 120)}\n${show()}`,
      );

    // A malformed request: a 4xx problem, or (when the server read it anyway) the operation's answer.
    if (o.malformed) {
      const asOperation = op && o.isGet ? this.operationViolation(op, res, o.head) : { code: 'no-operation', text: '' };
      const asGeneric = this.genericViolation(res, o.head);
      if (asOperation && asGeneric)
        this.fail(
          `malformed:${MALFORMED.has(r.extra) ? r.extra : 'raw-bytes'}:${asGeneric.code}`,
          `${asGeneric.text}\n${show()}`,
        );
      this.account(ctx, op, !asOperation, key, res, where);
      return;
    }
    // Outside any operation: an unknown path, another method.
    if (!op || !o.isGet) {
      const v = this.genericViolation(res, o.head);
      if (v) this.fail(`outside-operation:${!op ? 'unknown-path' : r.method}:${v.code}`, `${v.text}\n${show()}`);
      this.account(ctx, undefined, false, key, res, where);
      return;
    }

    let inOperation = o.plain;
    if (!o.plain) {
      const t = o.twin!;
      const same =
        res.status === t.status &&
        (res.status !== 400 || (res.body as any)?.detail === (t.body as any)?.detail) &&
        (res.status !== 200 ||
          o.head ||
          ((res.body as any)?.count === (t.body as any)?.count &&
            (res.body as any)?.query === (t.body as any)?.query &&
            (res.body as any)?.tier === (t.body as any)?.tier));
      const stateDependent = res.status === 429 || this.isIpBlock(res);
      const form =
        r.target.kind === 'operation'
          ? r.target.targetForm === 'origin'
            ? r.target.pathForm
            : r.target.targetForm
          : '';
      this.stats.checked.twinComparisons++;
      if (same || stateDependent) inOperation = true;
      else if (res.status === 400 || res.status === 404) {
        const v = this.genericViolation(res, o.head);
        if (v) this.fail(`odd-form:${form}:${res.status}:${v.code}`, `${v.text}\n${show()}`);
      } else {
        this.fail(
          `odd-form:${form}:${t.status}-became-${res.status}`,
          `the plain path answered ${t.status}${t.status === 400 ? ` (${(t.body as any)?.detail})` : ''}, this spelling ${res.status}\n${show()}`,
        );
      }
    }
    const acc = this.account(ctx, op, inOperation, key, res, where);
    void acc;
    if (!inOperation) return;

    const v = this.operationViolation(op, res, o.head);
    if (v) this.fail(`contract:${op.operationId}:${res.status}:${v.code}`, `${v.text}\n${show()}`);

    if (!o.plain) return; // the twin has had the checks below
    if (res.status === 400 && !o.head) this.stats.checked.namesParameter++;
    if (res.status === 400 && !o.head && !this.namesParameter(op, query, (res.body as any)?.detail)) {
      this.fail(
        `400-names-no-parameter:${op.operationId}`,
        `detail ${JSON.stringify((res.body as any)?.detail)} names no parameter of the request\n${show()}`,
      );
    }
    this.checkOracle(r, op, query, res, show);
  }

  /** What the contract settles: the key first, then the parameters. */
  private checkOracle(
    r: FuzzRequest,
    op: OperationSpec,
    query: RenderedQuery,
    res: RawResponse,
    show: () => string,
  ): void {
    const s = res.status;
    const block = this.isIpBlock(res);
    const counted = COUNTED_OPS.has(op.operationId);
    const clearKeyHeader = r.keyHeader === 'normal' || r.keyHeader === 'lowerName' || r.keyHeader === 'padded';
    const noKey = r.keyHeader === 'empty' || r.keyState === 'none';
    if (PUBLIC_OPS.has(op.operationId)) {
      if (query.verdict.label === 'invalid' && s !== 400) this.fail(`public:invalid-got-${s}`, show());
      if (query.verdict.label === 'valid' && s !== 200) this.fail(`public:valid-got-${s}`, show());
      return;
    }
    if (noKey || (clearKeyHeader && (r.keyState === 'unknown' || r.keyState === 'sandbox'))) {
      if (s !== 401 && !block) this.fail(`auth:${noKey ? 'no' : r.keyState}-key-got-${s}`, show());
      return;
    }
    if (!clearKeyHeader) return;
    if (r.keyState === 'deactivated' || (r.keyState === 'free' && counted)) {
      if (s !== 403) this.fail(`auth:${r.keyState}-key-got-${s}:${op.operationId}`, show());
      return;
    }
    const tier = tierOf(r.keyState)!;
    if (op.operationId === 'searchNews' && !plans[tier].search && r.keyState !== 'free') {
      if (s !== 403) this.fail(`auth:${r.keyState}-search-got-${s}`, show());
      return;
    }
    // The ticker filter (`tickers`, its `min_relevance`) is tier access (before the rate limit and the parameters):
    // present at all, with a plan without ticker data, it is a 403 whatever its value.
    if (
      !plans[tier].tickers &&
      op.params.some((p) => p.name === 'tickers') &&
      query.names.some((n) => n.decoded === 'tickers' || n.decoded === 'min_relevance')
    ) {
      if (s !== 403) this.fail(`auth:${r.keyState}-tickers-got-${s}:${op.operationId}`, show());
      else if (
        !block &&
        (res.body as any)?.detail !== undefined &&
        (res.body as any).detail !== problems.tickerFilterMaxPlanOnly.detail
      )
        this.fail(`auth:${r.keyState}-tickers-wrong-text`, show());
      return;
    }
    if (s === 401 || (s === 403 && !block))
      return this.fail(`auth:${r.keyState}-key-refused-${s}:${op.operationId}`, show());
    if (s === 403 || s === 429) return;
    if (query.verdict.label !== 'ambiguous')
      this.stats.checked[query.verdict.label === 'invalid' ? 'expected400' : 'expected200']++;
    if (query.verdict.label === 'invalid' && s !== 400)
      this.fail(
        `invalid-admitted:${query.verdict.why}`,
        `the contract makes this request a 400 (${query.verdict.why}); got ${s}\n${show()}`,
      );
    if (query.verdict.label === 'valid' && s !== 200)
      this.fail(`valid-refused:${op.operationId}:${s}`, `every parameter meets the contract; got ${s}\n${show()}`);
  }

  // ------------------------------------------------------------------------------------------
  // Rate-limit sequences

  async runRateCase(c: RateCase): Promise<void> {
    this.stats.rateCases++;
    await this.seedArticles();
    const ctx: CaseContext = { keys: new Map(), stateOfKey: new Map(), ips: new Map(), ledger: new Map() };
    const keys: string[] = [];
    for (const tier of c.keys) {
      const k = (await this.makeKey(tier))!;
      ctx.stateOfKey.set(k, tier);
      keys.push(k);
    }
    const ips = keys.map(() => this.nextIp());
    const describe = () => describeRateCase(c);
    for (const [i, step] of c.steps.entries()) {
      if (step.advanceMs) this.svc.clock.advance(step.advanceMs);
      const k = step.key % keys.length;
      const key = keys[k]!;
      const op = operationById.get(step.operationId)!;
      const query = renderQuery(op, step.query);
      const r: FuzzRequest = {
        target: {
          kind: 'operation',
          operationId: op.operationId,
          pathForm: 'plain',
          targetForm: 'origin',
          query: step.query,
          salt: 0,
        },
        method: 'GET',
        extra: 'none',
        keyState: c.keys[k]!,
        keyHeader: 'normal',
        ipSlot: k,
        advanceMs: step.advanceMs,
      };
      const where = `step ${i + 1} of a rate-limit sequence: ${describeRateStep(c, i)}`;
      const res = await this.send(r, key, ips[k]!, true, where, query.rawBytes);
      this.count(op.operationId, res.status);
      const inWindow = () =>
        (ctx.ledger.get(key) ?? []).filter((t) => t > this.svc.clock.now - limits.rateWindowMs).length;
      const before = inWindow();
      await this.checkResponse(ctx, r, op, query, key, res, {
        head: false,
        plain: true,
        malformed: query.rawBytes,
        isGet: true,
        where: `${where}\n${describe()}\n`,
      });
      if (!COUNTED_OPS.has(op.operationId) || res.status === 403) continue;
      const limit = planLimit(c.keys[k]!);
      if (res.status === 429 && before < limit) {
        this.fail(
          'rate-limit:refused-with-room',
          `${where}: 429 with ${before} of ${limit} admitted in the last ${limits.rateWindowMs / 1000} s\n${describe()}\n→ ${showResponse(res)}`,
        );
      }
      const after = inWindow();
      const remaining = header(res, 'x-ratelimit-remaining');
      if (remaining !== undefined && Number(remaining) !== Math.max(0, limit - after)) {
        this.fail(
          'rate-limit:remaining-header',
          `${where}: X-RateLimit-Remaining ${remaining}, expected ${Math.max(0, limit - after)}\n${describe()}\n→ ${showResponse(res)}`,
        );
      }
    }
  }
}

/** fast-check parameters from the environment of a run. */
export function runParameters(
  env: NodeJS.ProcessEnv,
  defaults: { runs: number; seed?: number },
): { runs: number; rateRuns: number; seed: number } {
  const runs = Number(env.FUZZ_RUNS ?? defaults.runs);
  const seed = env.FUZZ_SEED !== undefined ? Number(env.FUZZ_SEED) : (defaults.seed ?? (Math.random() * 2 ** 31) | 0);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`FUZZ_RUNS must be a positive integer, not ${env.FUZZ_RUNS}`);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not ${env.FUZZ_SEED}`);
  return { runs, rateRuns: Math.max(5, Math.round(runs / 20)), seed };
}

export { fc };

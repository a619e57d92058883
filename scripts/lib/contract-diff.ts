/**
 * The breaking-change gate (`npm run contract:diff`): compares two bundled contracts (openapi.json and
 * asyncapi.json as `npm run generate` writes them) and sorts every difference that a client can notice
 * into `breaking` or `additive`.
 *
 * The rule: what a client sends may only get wider (a request accepted yesterday is accepted today),
 * and what a client receives may only get narrower (a response valid yesterday's way is valid today),
 * with the one exception every API makes: a response may gain an optional field (clients ignore fields
 * they do not know; the contract says so). Concretely, breaking:
 * - a path, operation, channel, message, parameter, response status, content type or header removed;
 * - a new required parameter, a parameter or request field made required;
 * - a request type, enum, bound (length, range, items), pattern or format narrowed;
 * - a response field removed or no longer required, a response type, enum value or bound widened;
 * - an enum value removed anywhere.
 * Additive: new paths, operations, optional parameters, response statuses and fields; request rules
 * widened; response rules narrowed.
 */

export interface Change {
  /** Where, as a readable path: `GET /v1/news › parameter limit › maximum`. */
  where: string;
  message: string;
}

export interface ContractDiff {
  breaking: Change[];
  additive: Change[];
}

type Json = Record<string, unknown>;
type Direction = 'request' | 'response';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Follows local `$ref`s (`#/components/...`) of one document; a cycle resolves to `{}`. */
function resolver(doc: Json): (node: unknown) => Json {
  const pointer = (ref: string): unknown => {
    if (!ref.startsWith('#/')) throw new Error(`only local $ref is supported in a bundled contract, got ${ref}`);
    let at: unknown = doc;
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      at = isObject(at) || Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined;
    }
    if (at === undefined) throw new Error(`unresolvable $ref ${ref}`);
    return at;
  };
  return (node) => {
    let at = node;
    const seen = new Set<string>();
    while (isObject(at) && typeof at.$ref === 'string') {
      if (seen.has(at.$ref)) return {};
      seen.add(at.$ref);
      at = pointer(at.$ref);
    }
    return isObject(at) ? at : {};
  };
}

class Collector implements ContractDiff {
  readonly breaking: Change[] = [];
  readonly additive: Change[] = [];
  constructor(
    readonly oldRes: (n: unknown) => Json,
    readonly newRes: (n: unknown) => Json,
  ) {}
  add(kind: 'breaking' | 'additive', where: string[], message: string): void {
    this[kind].push({ where: where.join(' › '), message });
  }
}

// ---- schemas ---------------------------------------------------------------------------------------

/** A schema with `allOf` folded in (our contracts use `allOf` only to add `required` to a `$ref`). */
function flatten(schema: unknown, res: (n: unknown) => Json, depth = 0): Json {
  const s = res(schema);
  if (!Array.isArray(s.allOf) || depth > 8) return s;
  const out: Json = { ...s };
  delete out.allOf;
  for (const part of s.allOf) {
    const p = flatten(part, res, depth + 1);
    for (const [k, v] of Object.entries(p)) {
      if (k === 'required') out.required = [...new Set([...((out.required as string[]) ?? []), ...(v as string[])])];
      else if (k === 'properties') out.properties = { ...((out.properties as Json) ?? {}), ...(v as Json) };
      else if (!(k in out)) out[k] = v;
    }
  }
  return out;
}

function typesOf(s: Json): Set<string> | undefined {
  if (s.type === undefined) return undefined;
  const list = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  return new Set(list);
}

/** Whether a value of type `t` is accepted by a schema allowing `types` (integer ⊂ number). */
function accepts(types: Set<string>, t: string): boolean {
  return types.has(t) || (t === 'integer' && types.has('number'));
}

/** Bounds where a larger value means a wider schema, and where a smaller one does. */
const UPPER = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'] as const;
const LOWER = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'] as const;

/**
 * Compares two schemas. "Widened" means the new schema accepts something the old did not; in a
 * request that is additive, in a response breaking. "Narrowed" is the reverse.
 */
function compareSchema(c: Collector, oldNode: unknown, newNode: unknown, where: string[], dir: Direction): void {
  // Bundled contracts are not recursive; the depth bound only guards against a hand-made cycle.
  if (where.length > 40) return;
  const o = flatten(oldNode, c.oldRes);
  const n = flatten(newNode, c.newRes);
  const widened = (what: string) =>
    c.add(
      dir === 'request' ? 'additive' : 'breaking',
      where,
      `${what} (${dir} ${dir === 'request' ? 'accepts more' : 'may now carry more'})`,
    );
  const narrowed = (what: string) =>
    c.add(
      dir === 'request' ? 'breaking' : 'additive',
      where,
      `${what} (${dir} ${dir === 'request' ? 'accepts less' : 'carries less'})`,
    );

  // type
  const ot = typesOf(o);
  const nt = typesOf(n);
  if (ot && !nt) widened('type constraint removed');
  else if (!ot && nt) narrowed(`type constrained to ${[...nt].join('|')}`);
  else if (ot && nt) {
    const lost = [...ot].filter((t) => !accepts(nt, t));
    const gained = [...nt].filter((t) => !accepts(ot, t));
    if (lost.length) narrowed(`type ${lost.join('|')} no longer allowed`);
    if (gained.length) widened(`type ${gained.join('|')} now allowed`);
  }

  // enum: a removed value is breaking in either direction (it was documented as a possible value);
  // a new value widens.
  if (Array.isArray(o.enum) || Array.isArray(n.enum)) {
    const oe = Array.isArray(o.enum) ? o.enum.map((v) => JSON.stringify(v)) : undefined;
    const ne = Array.isArray(n.enum) ? n.enum.map((v) => JSON.stringify(v)) : undefined;
    if (oe && ne) {
      const removed = oe.filter((v) => !ne.includes(v));
      const added = ne.filter((v) => !oe.includes(v));
      if (removed.length) c.add('breaking', where, `enum value ${removed.join(', ')} removed`);
      if (added.length) widened(`enum value ${added.join(', ')} added`);
    } else if (oe && !ne) widened('enum constraint removed');
    else if (!oe && ne) narrowed('enum constraint added');
  }
  if ('const' in o || 'const' in n) {
    if (JSON.stringify(o.const) !== JSON.stringify(n.const)) {
      if (!('const' in n)) widened('const removed');
      else c.add('breaking', where, `const changed from ${JSON.stringify(o.const)} to ${JSON.stringify(n.const)}`);
    }
  }

  // bounds
  for (const b of UPPER) {
    const ov = o[b] as number | undefined;
    const nv = n[b] as number | undefined;
    if (ov === nv) continue;
    if (nv === undefined || (ov !== undefined && nv > ov)) widened(`${b} ${ov} → ${nv ?? 'none'}`);
    else narrowed(`${b} ${ov ?? 'none'} → ${nv}`);
  }
  for (const b of LOWER) {
    const ov = o[b] as number | undefined;
    const nv = n[b] as number | undefined;
    if (ov === nv) continue;
    if (nv === undefined || (ov !== undefined && nv < ov)) widened(`${b} ${ov} → ${nv ?? 'none'}`);
    else narrowed(`${b} ${ov ?? 'none'} → ${nv}`);
  }
  for (const rule of ['pattern', 'format'] as const) {
    if (o[rule] === n[rule]) continue;
    if (n[rule] === undefined) widened(`${rule} ${JSON.stringify(o[rule])} removed`);
    else if (o[rule] === undefined) narrowed(`${rule} ${JSON.stringify(n[rule])} added`);
    // Two patterns cannot be compared in general: a changed one may reject what the old accepted.
    else c.add('breaking', where, `${rule} changed from ${JSON.stringify(o[rule])} to ${JSON.stringify(n[rule])}`);
  }

  // objects
  const op = (o.properties as Json | undefined) ?? {};
  const np = (n.properties as Json | undefined) ?? {};
  const oreq = new Set((o.required as string[] | undefined) ?? []);
  const nreq = new Set((n.required as string[] | undefined) ?? []);
  for (const name of Object.keys(op)) {
    if (!(name in np)) {
      c.add('breaking', [...where, name], dir === 'request' ? 'request field removed' : 'response field removed');
      continue;
    }
    compareSchema(c, op[name], np[name], [...where, name], dir);
  }
  for (const name of Object.keys(np)) {
    if (name in op) continue;
    if (dir === 'request' && nreq.has(name)) c.add('breaking', [...where, name], 'new required request field');
    else c.add('additive', [...where, name], `new ${nreq.has(name) ? 'required' : 'optional'} ${dir} field`);
  }
  for (const name of oreq)
    if (!nreq.has(name) && name in np) {
      if (dir === 'response')
        c.add('breaking', [...where, name], 'response field no longer required (may now be absent)');
      else c.add('additive', [...where, name], 'request field no longer required');
    }
  for (const name of nreq)
    if (!oreq.has(name) && name in op) {
      if (dir === 'request') c.add('breaking', [...where, name], 'request field made required');
      else c.add('additive', [...where, name], 'response field now always present');
    }
  // additionalProperties: false → allowed widens; only requests care (responses may gain optional fields).
  if (dir === 'request' && o.additionalProperties !== n.additionalProperties) {
    if (n.additionalProperties === false) narrowed('additional properties no longer accepted');
    else if (o.additionalProperties === false) widened('additional properties accepted');
  }

  // arrays
  if (o.items !== undefined || n.items !== undefined) {
    if (o.items !== undefined && n.items !== undefined) compareSchema(c, o.items, n.items, [...where, '[]'], dir);
    else if (n.items === undefined) widened('items constraint removed');
    else narrowed('items constraint added');
  }

  // alternatives: compared option by option when the count is unchanged; otherwise a removed option
  // narrows and an added one widens.
  for (const alt of ['oneOf', 'anyOf'] as const) {
    const oa = (o[alt] as unknown[] | undefined) ?? [];
    const na = (n[alt] as unknown[] | undefined) ?? [];
    if (oa.length === na.length) oa.forEach((s, i) => compareSchema(c, s, na[i], [...where, `${alt}[${i}]`], dir));
    else if (na.length < oa.length) narrowed(`${alt} lost ${oa.length - na.length} option(s)`);
    else widened(`${alt} gained ${na.length - oa.length} option(s)`);
  }
}

// ---- OpenAPI ----------------------------------------------------------------------------------------

function parameters(op: Json, pathItem: Json, res: (n: unknown) => Json): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const list of [pathItem.parameters, op.parameters]) {
    for (const p of (list as unknown[] | undefined) ?? []) {
      const r = res(p);
      out.set(`${r.in}:${r.name}`, r);
    }
  }
  return out;
}

function compareContent(c: Collector, oldContent: unknown, newContent: unknown, where: string[], dir: Direction): void {
  const o = (oldContent as Json | undefined) ?? {};
  const n = (newContent as Json | undefined) ?? {};
  for (const type of Object.keys(o)) {
    if (!(type in n)) {
      // A request content type removed rejects clients that send it; a response one removed breaks
      // clients that parse it.
      c.add('breaking', [...where, type], `content type ${type} removed`);
      continue;
    }
    compareSchema(c, (o[type] as Json).schema ?? {}, (n[type] as Json).schema ?? {}, [...where, type], dir);
  }
  for (const type of Object.keys(n))
    if (!(type in o)) c.add('additive', [...where, type], `content type ${type} added`);
}

function compareOperation(c: Collector, label: string[], o: Json, n: Json, oPath: Json, nPath: Json): void {
  const op = parameters(o, oPath, c.oldRes);
  const np = parameters(n, nPath, c.newRes);
  for (const [key, p] of op) {
    const where = [...label, `parameter ${key.replace(':', ' ')}`];
    const q = np.get(key);
    if (!q) {
      c.add('breaking', where, 'parameter removed');
      continue;
    }
    if (!p.required && q.required) c.add('breaking', where, 'parameter made required');
    if (p.required && !q.required) c.add('additive', where, 'parameter made optional');
    compareSchema(c, p.schema ?? {}, q.schema ?? {}, where, 'request');
  }
  for (const [key, q] of np) {
    if (op.has(key)) continue;
    const where = [...label, `parameter ${key.replace(':', ' ')}`];
    c.add(
      q.required ? 'breaking' : 'additive',
      where,
      q.required ? 'new required parameter' : 'new optional parameter',
    );
  }

  const ob = o.requestBody ? c.oldRes(o.requestBody) : undefined;
  const nb = n.requestBody ? c.newRes(n.requestBody) : undefined;
  if (ob && !nb) c.add('breaking', [...label, 'request body'], 'request body removed');
  else if (!ob && nb)
    c.add(
      nb.required ? 'breaking' : 'additive',
      [...label, 'request body'],
      nb.required ? 'new required request body' : 'new optional request body',
    );
  else if (ob && nb) {
    if (!ob.required && nb.required) c.add('breaking', [...label, 'request body'], 'request body made required');
    compareContent(c, ob.content, nb.content, [...label, 'request body'], 'request');
  }

  const ors = (o.responses as Json | undefined) ?? {};
  const nrs = (n.responses as Json | undefined) ?? {};
  for (const status of Object.keys(ors)) {
    const where = [...label, `response ${status}`];
    if (!(status in nrs)) {
      c.add('breaking', where, 'response removed');
      continue;
    }
    const or = c.oldRes(ors[status]);
    const nr = c.newRes(nrs[status]);
    compareContent(c, or.content, nr.content, where, 'response');
    const oh = (or.headers as Json | undefined) ?? {};
    const nh = (nr.headers as Json | undefined) ?? {};
    for (const h of Object.keys(oh)) {
      if (!(h in nh)) c.add('breaking', [...where, `header ${h}`], 'response header removed');
      else
        compareSchema(
          c,
          c.oldRes(oh[h]).schema ?? {},
          c.newRes(nh[h]).schema ?? {},
          [...where, `header ${h}`],
          'response',
        );
    }
    for (const h of Object.keys(nh))
      if (!(h in oh)) c.add('additive', [...where, `header ${h}`], 'response header added');
  }
  for (const status of Object.keys(nrs))
    if (!(status in ors)) c.add('additive', [...label, `response ${status}`], 'response added');
}

export function diffOpenApi(oldDoc: Json, newDoc: Json): ContractDiff {
  const c = new Collector(resolver(oldDoc), resolver(newDoc));
  const oPaths = (oldDoc.paths as Json | undefined) ?? {};
  const nPaths = (newDoc.paths as Json | undefined) ?? {};
  for (const path of Object.keys(oPaths)) {
    if (!(path in nPaths)) {
      c.add('breaking', [path], 'path removed');
      continue;
    }
    const oItem = c.oldRes(oPaths[path]);
    const nItem = c.newRes(nPaths[path]);
    for (const { label, o, n } of keptOperations(
      c,
      oItem,
      nItem,
      (m) => [`${m.toUpperCase()} ${path}`],
      'generated clients',
    )) {
      const oSec = JSON.stringify(o.security ?? oldDoc.security ?? []);
      const nSec = JSON.stringify(n.security ?? newDoc.security ?? []);
      if (oSec !== nSec) c.add('breaking', label, `security requirement changed from ${oSec} to ${nSec}`);
      compareOperation(c, label, o, n, oItem, nItem);
    }
    for (const m of METHODS)
      if (nItem[m] && !oItem[m]) c.add('additive', [`${m.toUpperCase()} ${path}`], 'operation added');
  }
  for (const path of Object.keys(nPaths)) if (!(path in oPaths)) c.add('additive', [path], 'path added');
  compareWebhooks(c, oldDoc, newDoc);
  return { breaking: c.breaking, additive: c.additive };
}

/**
 * The operations of an old path or webhook item that the new one still has, one at a time with their
 * label; an operation removed, or its operationId renamed (`users`: who is built on the id), is breaking.
 */
function* keptOperations(
  c: Collector,
  oItem: Json,
  nItem: Json,
  labelOf: (method: string) => string[],
  users: string,
): Generator<{ label: string[]; o: Json; n: Json }> {
  for (const m of METHODS) {
    if (!oItem[m]) continue;
    const label = labelOf(m);
    if (!nItem[m]) {
      c.add('breaking', label, 'operation removed');
      continue;
    }
    const o = oItem[m] as Json;
    const n = nItem[m] as Json;
    if (o.operationId !== n.operationId)
      c.add(
        'breaking',
        label,
        `operationId renamed from ${String(o.operationId)} to ${String(n.operationId)} (${users} use it)`,
      );
    yield { label, o, n };
  }
}

/**
 * OpenAPI 3.1 `webhooks`: requests the service sends to a partner's receiver. Their direction is the
 * reverse of a path's: the request body and headers are what the receiver **receives** (they may only get
 * narrower, or gain an optional field), and the answers listed are what the receiver sends. A webhook or
 * operation removed, or an operationId renamed, breaks the receivers built on it; a new one is additive.
 */
function compareWebhooks(c: Collector, oldDoc: Json, newDoc: Json): void {
  const oHooks = (oldDoc.webhooks as Json | undefined) ?? {};
  const nHooks = (newDoc.webhooks as Json | undefined) ?? {};
  for (const name of Object.keys(oHooks)) {
    if (!(name in nHooks)) {
      c.add('breaking', [`webhook ${name}`], 'webhook removed');
      continue;
    }
    const oItem = c.oldRes(oHooks[name]);
    const nItem = c.newRes(nHooks[name]);
    for (const { label, o, n } of keptOperations(
      c,
      oItem,
      nItem,
      (m) => [`webhook ${name}`, m.toUpperCase()],
      'generated receivers',
    )) {
      const ob = c.oldRes(o.requestBody ?? {});
      const nb = c.newRes(n.requestBody ?? {});
      compareContent(c, ob.content, nb.content, [...label, 'body'], 'response');
      const params = (op: Json, res: (x: unknown) => Json) =>
        new Map(
          ((op.parameters as unknown[] | undefined) ?? [])
            .map((p) => res(p))
            .map((p) => [`${String(p.in)} ${String(p.name)}`, p]),
        );
      const op = params(o, c.oldRes);
      const np = params(n, c.newRes);
      for (const [k, p] of op) {
        const q = np.get(k);
        if (!q) c.add('breaking', [...label, k], 'header removed');
        else
          compareSchema(
            c,
            (p.schema as Json | undefined) ?? {},
            (q.schema as Json | undefined) ?? {},
            [...label, k],
            'response',
          );
      }
      for (const k of np.keys()) if (!op.has(k)) c.add('additive', [...label, k], 'header added');
      const ors = (o.responses as Json | undefined) ?? {};
      const nrs = (n.responses as Json | undefined) ?? {};
      for (const st of Object.keys(ors))
        if (!(st in nrs)) c.add('breaking', [...label, `answer ${st}`], 'expected answer removed');
      for (const st of Object.keys(nrs))
        if (!(st in ors)) c.add('additive', [...label, `answer ${st}`], 'expected answer added');
    }
    for (const m of METHODS)
      if (nItem[m] && !oItem[m]) c.add('additive', [`webhook ${name}`, m.toUpperCase()], 'operation added');
  }
  for (const name of Object.keys(nHooks))
    if (!(name in oHooks)) c.add('additive', [`webhook ${name}`], 'webhook added');
}

// ---- AsyncAPI 3 -------------------------------------------------------------------------------------

export function diffAsyncApi(oldDoc: Json, newDoc: Json): ContractDiff {
  const c = new Collector(resolver(oldDoc), resolver(newDoc));
  const oCh = (oldDoc.channels as Json | undefined) ?? {};
  const nCh = (newDoc.channels as Json | undefined) ?? {};
  for (const name of Object.keys(oCh)) {
    const label = [`channel ${name}`];
    if (!(name in nCh)) {
      c.add('breaking', label, 'channel removed');
      continue;
    }
    const o = c.oldRes(oCh[name]);
    const n = c.newRes(nCh[name]);
    if (o.address !== n.address)
      c.add('breaking', label, `address changed from ${String(o.address)} to ${String(n.address)}`);
    // The connection's query parameters are what a client sends: a request.
    const oq = (c.oldRes((c.oldRes(o.bindings).ws as Json | undefined) ?? {}).query as Json | undefined) ?? {};
    const nq = (c.newRes((c.newRes(n.bindings).ws as Json | undefined) ?? {}).query as Json | undefined) ?? {};
    compareSchema(c, oq, nq, [...label, 'query'], 'request');
    const oh = (c.oldRes((c.oldRes(o.bindings).ws as Json | undefined) ?? {}).headers as Json | undefined) ?? {};
    const nh = (c.newRes((c.newRes(n.bindings).ws as Json | undefined) ?? {}).headers as Json | undefined) ?? {};
    compareSchema(c, oh, nh, [...label, 'headers'], 'request');
    const om = (o.messages as Json | undefined) ?? {};
    const nm = (n.messages as Json | undefined) ?? {};
    for (const m of Object.keys(om)) {
      if (!(m in nm)) {
        c.add('breaking', [...label, `message ${m}`], 'message removed');
        continue;
      }
      // What the server pushes is what the client receives: a response.
      compareSchema(
        c,
        c.oldRes(om[m]).payload ?? {},
        c.newRes(nm[m]).payload ?? {},
        [...label, `message ${m}`],
        'response',
      );
    }
    for (const m of Object.keys(nm)) if (!(m in om)) c.add('additive', [...label, `message ${m}`], 'message added');
  }
  for (const name of Object.keys(nCh)) if (!(name in oCh)) c.add('additive', [`channel ${name}`], 'channel added');
  const oOps = (oldDoc.operations as Json | undefined) ?? {};
  const nOps = (newDoc.operations as Json | undefined) ?? {};
  for (const name of Object.keys(oOps)) {
    const label = [`operation ${name}`];
    if (!(name in nOps)) c.add('breaking', label, 'operation removed');
    else if (c.oldRes(oOps[name]).action !== c.newRes(nOps[name]).action) c.add('breaking', label, 'action changed');
  }
  for (const name of Object.keys(nOps))
    if (!(name in oOps)) c.add('additive', [`operation ${name}`], 'operation added');
  // Close codes are part of what a client handles: one removed or given another meaning breaks it.
  const codes = (doc: Json, res: (n: unknown) => Json) =>
    (res((doc['x-stream'] as Json | undefined) ?? {}).closeCodes as Json | undefined) ?? {};
  const oc = codes(oldDoc, c.oldRes);
  const nc = codes(newDoc, c.newRes);
  for (const k of Object.keys(oc)) {
    if (!(k in nc)) c.add('breaking', [`close code ${k}`], 'close code removed');
    else if (JSON.stringify(oc[k]) !== JSON.stringify(nc[k]))
      c.add('breaking', [`close code ${k}`], `changed from ${JSON.stringify(oc[k])} to ${JSON.stringify(nc[k])}`);
  }
  for (const k of Object.keys(nc)) if (!(k in oc)) c.add('additive', [`close code ${k}`], 'close code added');
  return { breaking: c.breaking, additive: c.additive };
}

// ---- versions -------------------------------------------------------------------------------------

function semver(v: unknown): [number, number, number] | undefined {
  const m = typeof v === 'string' ? /^(\d+)\.(\d+)\.(\d+)$/.exec(v) : null;
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/**
 * What `info.version` must be, given the released version and the diff: breaking changes are refused
 * outright (a new major is a new contract, released on purpose with `--release`); additive changes need
 * a minor bump (same major); no change keeps the version or bumps the patch (descriptions, examples).
 * Returns the problems, empty when the version follows the rules.
 */
export function versionProblems(released: string, current: string, diff: ContractDiff, label: string): string[] {
  const r = semver(released);
  const c = semver(current);
  if (!r) return [`${label}: released info.version ${JSON.stringify(released)} is not MAJOR.MINOR.PATCH`];
  if (!c) return [`${label}: info.version ${JSON.stringify(current)} is not MAJOR.MINOR.PATCH`];
  const [rM, rm, rp] = r;
  const [cM, cm, cp] = c;
  if (diff.breaking.length > 0)
    return [
      `${label}: ${diff.breaking.length} breaking change(s) against the released ${released}; make the change additive (see docs/contract-changes.md)`,
    ];
  if (cM !== rM)
    return [
      `${label}: info.version ${current} changes the major version of ${released}, but nothing breaking changed; use ${rM}.${rm + (diff.additive.length ? 1 : 0)}.${diff.additive.length ? 0 : rp + 1}`,
    ];
  if (diff.additive.length > 0) {
    if (cm <= rm)
      return [
        `${label}: ${diff.additive.length} additive change(s) need a minor version above ${released}, e.g. ${rM}.${rm + 1}.0; info.version is ${current}`,
      ];
    return [];
  }
  if (cm < rm || (cm === rm && cp < rp))
    return [`${label}: info.version ${current} is lower than the released ${released}`];
  if (cm > rm)
    return [
      `${label}: info.version ${current} bumps the minor version of ${released}, but nothing was added; use a patch version`,
    ];
  return [];
}

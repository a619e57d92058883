/**
 * The request samples of openapi.yaml (`x-codeSamples`, shown by the REST reference): every operation
 * has a curl and a TypeScript sample, and both are correct for their operation. The curl command is
 * parsed (method, server, path, query parameters checked against the operation, values against their
 * schemas, the key header by the security scheme's name); the TypeScript sample is type-checked
 * against the generated `paths` type with the repository's compiler options.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { deref, loadYaml, openapiAjv, repoRoot } from '../support/specs.js';

const openapi = loadYaml('openapi.yaml');
const ajv = openapiAjv(openapi);

interface Operation {
  id: string;
  method: string;
  path: string;
  op: any;
}

const operations: Operation[] = Object.entries<any>(openapi.paths).flatMap(([path, item]) =>
  Object.entries<any>(item).map(([method, op]) => ({
    id: op.operationId as string,
    method: method.toUpperCase(),
    path,
    op,
  })),
);

const samplesOf = (op: any, lang: string): { lang: string; label?: string; source: string }[] =>
  (op['x-codeSamples'] ?? []).filter((s: any) => String(s.lang).toLowerCase() === lang.toLowerCase());

/** The API key header, as the contract's security scheme names it. */
const keyHeader: string = (() => {
  const schemes = Object.values<any>(openapi.components.securitySchemes).filter(
    (s) => s.type === 'apiKey' && s.in === 'header',
  );
  if (schemes.length !== 1) throw new Error('expected one apiKey header security scheme in openapi.yaml');
  return schemes[0].name;
})();

/** An operation that overrides the global security with none (`security: []`): called without a key. */
const isPublic = (operation: { op: any }): boolean =>
  Array.isArray(operation.op.security) && operation.op.security.length === 0;

/** The base URLs of the contract's servers, variables at their defaults. */
const serverUrls: string[] = openapi.servers.map((s: any) =>
  String(s.url).replace(/\{(\w+)\}/g, (_: string, v: string) => s.variables[v].default),
);

/** Splits a shell command into words: quotes, backslash escapes and line continuations. `$VAR` stays literal. */
function shellWords(source: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && /["\\$`]/.test(source[i + 1] ?? '')) word += source[++i]!;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (c === '\\') {
      const next = source[++i];
      if (next === '\n') continue;
      word = (word ?? '') + (next ?? '');
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) {
      while (i < source.length && source[i] !== '\n') i++;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) throw new Error('unterminated quote');
  if (word !== undefined) words.push(word);
  return words;
}

const CURL_FLAGS = new Set([
  '-s',
  '-S',
  '-sS',
  '-i',
  '-si',
  '-f',
  '-fsS',
  '--silent',
  '--show-error',
  '--fail',
  '--include',
]);
const CURL_WITH_VALUE = new Set(['-H', '--header', '-X', '--request']);

/** What is wrong with a curl sample for an operation ([] when nothing). */
function curlProblems(source: string, operation: Operation): string[] {
  const problems: string[] = [];
  const words = shellWords(source.trim());
  if (words[0] !== 'curl') return [`does not start with curl: ${words[0]}`];
  let method = 'GET';
  const headers: [string, string][] = [];
  const urls: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (CURL_FLAGS.has(w)) continue;
    if (CURL_WITH_VALUE.has(w)) {
      const value = words[++i];
      if (value === undefined) return [`${w} without a value`];
      if (w === '-X' || w === '--request') method = value;
      else {
        const colon = value.indexOf(':');
        headers.push([value.slice(0, colon).trim(), value.slice(colon + 1).trim()]);
      }
      continue;
    }
    if (w.startsWith('-')) return [`unexpected curl option ${w}`];
    urls.push(w);
  }
  if (method !== operation.method) problems.push(`method ${method}, the operation is ${operation.method}`);
  if (urls.length !== 1) return [...problems, `expected one URL, got ${urls.length}`];
  const url = urls[0]!;
  const base = serverUrls.find((s) => url.startsWith(s + '/'));
  if (!base) return [...problems, `${url} is on none of the servers ${serverUrls.join(', ')}`];
  const rest = url.slice(base.length);
  const q = rest.indexOf('?');
  const path = q === -1 ? rest : rest.slice(0, q);
  if (path !== operation.path) problems.push(`path ${path}, the operation is ${operation.path}`);

  const query = new URLSearchParams(q === -1 ? '' : rest.slice(q + 1));
  const names = [...query.keys()];
  if (new Set(names).size !== names.length) problems.push(`a repeated query parameter: ${names.join(', ')}`);
  problems.push(
    ...queryProblems(
      [...query].map(([name, raw]) => [name, raw, true]),
      operation,
    ),
  );

  const key = headers.filter(([n]) => n.toLowerCase() === keyHeader.toLowerCase());
  if (isPublic(operation)) {
    if (key.length) problems.push(`a public operation (security: []) takes no ${keyHeader}`);
  } else if (key.length !== 1 || !key[0]![1]) problems.push(`expected one ${keyHeader} header with a value`);
  for (const [n] of headers)
    if (n.toLowerCase() !== keyHeader.toLowerCase()) problems.push(`header ${n} is not part of the contract`);
  return problems;
}

/**
 * What is wrong with the query parameters of a sample: each must be a query parameter of the operation
 * with a value its schema accepts (`fromUrl`: a URL's text, so integers are read from their digits), and
 * every required parameter must be there.
 */
function queryProblems(query: [name: string, value: unknown, fromUrl: boolean][], operation: Operation): string[] {
  const problems: string[] = [];
  const params = (operation.op.parameters ?? [])
    .map((p: any) => deref(openapi, p))
    .filter((p: any) => p.in === 'query');
  for (const [name, raw, fromUrl] of query) {
    const param = params.find((p: any) => p.name === name);
    if (!param) {
      problems.push(`query parameter ${name} is not a parameter of ${operation.id}`);
      continue;
    }
    const schema = deref(openapi, param.schema);
    const value = fromUrl && schema.type === 'integer' && /^\d+$/.test(String(raw)) ? Number(raw) : raw;
    const validate = ajv.compile({ ...schema, $id: undefined });
    if (!validate(value)) problems.push(`${name}=${String(raw)}: ${ajv.errorsText(validate.errors)}`);
  }
  for (const p of params.filter((p: any) => p.required))
    if (!query.some(([n]) => n === p.name)) problems.push(`required parameter ${p.name} missing`);
  return problems;
}

/** The query literal of the sample's `api.<METHOD>('<path>', { params: { query: { … } } })` call, checked. */
function tsQueryProblems(source: string, operation: Operation): string[] {
  const file = ts.createSourceFile('sample.ts', source, ts.ScriptTarget.ES2022, true);
  let call: ts.CallExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === operation.method &&
      ts.isStringLiteral(node.arguments[0]!) &&
      (node.arguments[0] as ts.StringLiteral).text === operation.path
    ) {
      call = node;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (!call) return [`no call api.${operation.method}('${operation.path}', …)`];
  const prop = (obj: ts.Node | undefined, name: string): ts.Expression | undefined =>
    obj && ts.isObjectLiteralExpression(obj)
      ? obj.properties.find(
          (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(file) === name,
        )?.initializer
      : undefined;
  const query = prop(prop(call.arguments[1], 'params'), 'query');
  const entries: [string, unknown, boolean][] = [];
  if (query && ts.isObjectLiteralExpression(query)) {
    for (const p of query.properties) {
      if (!ts.isPropertyAssignment(p)) return [`query property ${p.getText(file)} is not a plain literal`];
      const v = p.initializer;
      const value = ts.isNumericLiteral(v)
        ? Number(v.text)
        : ts.isStringLiteralLike(v)
          ? v.text
          : v.kind === ts.SyntaxKind.TrueKeyword
            ? true
            : v.kind === ts.SyntaxKind.FalseKeyword
              ? false
              : v.getText(file);
      entries.push([p.name.getText(file), value, false]);
    }
  }
  return queryProblems(entries, operation);
}

const { options: compilerOptions } = ts.parseJsonConfigFileContent(
  ts.readConfigFile(join(repoRoot, 'tsconfig.json'), ts.sys.readFile).config,
  ts.sys,
  repoRoot,
);

/**
 * Type errors of TypeScript sources compiled as files at the repository root (so the samples' import
 * of `./generated/openapi.js` and of `openapi-fetch` resolve as for a partner's project), by file name.
 */
function typeErrors(sources: Record<string, string>): string[] {
  const files = new Map(
    Object.entries(sources).map(([name, text]) => [join(repoRoot, `__code_sample_${name}.ts`), text]),
  );
  const host = ts.createCompilerHost(compilerOptions);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) =>
    files.has(f)
      ? ts.createSourceFile(f, files.get(f)!, language, true)
      : getSourceFile.call(host, f, language, ...rest);
  const program = ts.createProgram([...files.keys()], { ...compilerOptions, noEmit: true }, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? d.file.fileName.slice(repoRoot.length) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe('every operation of openapi.yaml has request samples', () => {
  it.each(operations.map((o) => [o.id, o] as const))('%s: exactly one curl and one TypeScript sample', (_id, o) => {
    expect(samplesOf(o.op, 'curl')).toHaveLength(1);
    expect(samplesOf(o.op, 'TypeScript')).toHaveLength(1);
  });

  it('lists every sample language in redocly.yaml (Redoc hides samples of unlisted languages)', () => {
    const listed = loadYaml('redocly.yaml').openapi.codeSamples.languages.map((l: any) =>
      String(l.label ?? l.lang).toLowerCase(),
    );
    const used = new Set(
      operations.flatMap((o) => (o.op['x-codeSamples'] ?? []).map((s: any) => String(s.label ?? s.lang).toLowerCase())),
    );
    expect([...used].filter((l) => !listed.includes(l))).toEqual([]);
  });
});

describe('the curl samples are correct for their operation', () => {
  it.each(operations.map((o) => [o.id, o] as const))('%s', (_id, o) => {
    expect(curlProblems(samplesOf(o.op, 'curl')[0]!.source, o)).toEqual([]);
  });

  it('catches a wrong path, an undocumented parameter, a bad value and a missing key (the check can fail)', () => {
    const list = operations.find((o) => o.id === 'listNews')!;
    const search = operations.find((o) => o.id === 'searchNews')!;
    const base = serverUrls[0];
    expect(curlProblems(`curl -s -H "${keyHeader}: k" "${base}/v1/newz"`, list)).toEqual([
      `path /v1/newz, the operation is ${list.path}`,
    ]);
    expect(curlProblems(`curl -s -H "${keyHeader}: k" "${base}${list.path}?page=2"`, list)).toEqual([
      'query parameter page is not a parameter of listNews',
    ]);
    expect(curlProblems(`curl -s -H "${keyHeader}: k" "${base}${list.path}?limit=0"`, list)[0]).toMatch(/^limit=0: /);
    expect(curlProblems(`curl -s \\\n  "${base}${search.path}?q=fed"`, search)).toEqual([
      `expected one ${keyHeader} header with a value`,
    ]);
    expect(curlProblems(`curl -s -H '${keyHeader}: k' "${base}${search.path}"`, search)).toEqual([
      'required parameter q missing',
    ]);
    expect(curlProblems(`curl -X POST -H '${keyHeader}: k' "http://elsewhere.example${list.path}"`, list)).toHaveLength(
      2,
    );
  });
});

describe('the TypeScript samples type-check against the generated paths type', () => {
  it('every sample compiles, calls its own operation and sends the key header (none to a public one)', () => {
    const sources = Object.fromEntries(operations.map((o) => [o.id, samplesOf(o.op, 'TypeScript')[0]!.source]));
    for (const o of operations) {
      expect(sources[o.id], o.id).toContain(`api.${o.method}('${o.path}'`);
      if (isPublic(o)) expect(sources[o.id], o.id).not.toContain(`'${keyHeader}'`);
      else expect(sources[o.id], o.id).toContain(`'${keyHeader}'`);
    }
    expect(typeErrors(sources)).toEqual([]);
  }, 60_000);

  it('the compiler reports a wrong value type or path (the check can fail)', () => {
    const sample = samplesOf(operations.find((o) => o.id === 'listNews')!.op, 'TypeScript')[0]!.source;
    const errors = typeErrors({
      wrongType: sample.replace('limit: 10', "limit: 'ten'"),
      wrongPath: sample.replace("api.GET('/v1/news'", "api.GET('/v1/newz'"),
    });
    expect(errors.some((e) => e.startsWith('__code_sample_wrongType.ts: ') && /string/.test(e))).toBe(true);
    expect(errors.some((e) => e.startsWith('__code_sample_wrongPath.ts: '))).toBe(true);
  }, 60_000);

  // openapi-fetch's option types do not reject an extra query property, so the literal arguments of the
  // call are read from the syntax tree and checked against the operation like the curl parameters.
  it.each(operations.map((o) => [o.id, o] as const))(
    '%s: the query literal holds documented parameters with valid values',
    (_id, o) => {
      expect(tsQueryProblems(samplesOf(o.op, 'TypeScript')[0]!.source, o)).toEqual([]);
    },
  );

  it('the query literal check reports an undocumented parameter and a bad value (the check can fail)', () => {
    const o = operations.find((x) => x.id === 'listNews')!;
    const sample = samplesOf(o.op, 'TypeScript')[0]!.source;
    expect(tsQueryProblems(sample.replace('limit: 10', 'page: 2'), o)).toEqual([
      'query parameter page is not a parameter of listNews',
    ]);
    expect(tsQueryProblems(sample.replace('limit: 10', 'limit: 1000'), o)[0]).toMatch(/^limit=1000: /);
    expect(tsQueryProblems(sample.replace("api.GET('/v1/news'", "api.GET('/v1/news/search'"), o)).toEqual([
      `no call api.GET('${o.path}', …)`,
    ]);
  });
});

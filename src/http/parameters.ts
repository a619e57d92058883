/**
 * A request's query, read once and checked against the contract, so service and mock answer a bad request
 * alike. `readQuery` keeps every pair (`+` is a space except in `since`: an offset sign); `parameterReader`
 * gives typed parameters (defaults filled) or the `400` of the first wrong one: unknown, then in contract
 * order repeated, missing or invalid (integers and numbers plain decimal, date-times a real instant).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openapiDocument, operationParameters, type ParameterSpec } from '../contract/index.js';
import { parseRfc3339 } from '../domain/time.js';
import { echo } from './target.js';

export type QueryValues = Record<string, string | string[]>;

/** The rule of a parameter in words, e.g. `an integer between 1 and 100`. */
function ruleText(schema: any): string {
  if (schema.type === 'integer') return `an integer between ${schema.minimum} and ${schema.maximum}`;
  if (schema.type === 'number') return `a decimal number from ${schema.minimum} to ${schema.maximum}, e.g. 0.8`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`;
  if (schema.format === 'date-time') return 'an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z';
  if (schema.type === 'array')
    return `${schema.minItems} to ${schema.maxItems} upper-case ticker symbols separated by commas, e.g. AAPL,MSFT`;
  // An id (after, before): fixed length and a pattern.
  if (schema.type === 'string' && schema.pattern && schema.minLength === schema.maxLength)
    return `an article id (a ULID, ${schema.minLength} characters)`;
  if (schema.type === 'string' && schema.minLength !== undefined) {
    return `a string of ${schema.minLength} to ${schema.maxLength} characters, not only spaces`;
  }
  return `a valid ${schema.type}`;
}

export function parameterProblemDetail(param: ParameterSpec, issue: 'invalid' | 'missing' | 'repeated'): string {
  if (issue === 'missing') return `${param.name} is required and must be ${ruleText(param.schema)}`;
  if (issue === 'repeated') return `${param.name} must be given once`;
  return `${param.name} must be ${ruleText(param.schema)}`;
}

export function unknownParameterDetail(name: string): string {
  return `${name === '' ? 'A parameter with an empty name' : echo(name)} is not a parameter of this operation`;
}

/** The query string (no `?`) as form pairs; defineProperty makes `__proto__` an own, refused name, not a prototype. */
export function readQuery(qs: string): QueryValues {
  const out: QueryValues = {};
  if (!qs) return out;
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    const key = safeDecode(rawKey.replace(/\+/g, ' '));
    const value = safeDecode(key === 'since' ? rawValue : rawValue.replace(/\+/g, ' '));
    const prev = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    const next = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export function queryOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
}

/**
 * Percent-decoded; a malformed escape (a bare `%`, a byte that starts no UTF-8 character) stays as written, every
 * valid character around it decoded.
 */
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, decodeEscapes);
  }
}

/** A run of `%XX` escapes, one UTF-8 character at a time: a sequence that is none stays as written, byte by byte. */
function decodeEscapes(run: string): string {
  let out = '';
  for (let i = 0; i < run.length;) {
    const lead = Number.parseInt(run.slice(i + 1, i + 3), 16);
    const bytes = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    try {
      out += decodeURIComponent(run.slice(i, i + 3 * bytes));
      i += 3 * bytes;
    } catch {
      out += run.slice(i, i + 3);
      i += 3;
    }
  }
  return out;
}

export type ParameterReading = { ok: true; params: Record<string, unknown> } | { ok: false; detail: string };

const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats.default(ajv);
// The whole contract as one schema resource, so a parameter's `$ref`s resolve where they point.
const CONTRACT_ID = 'urn:fns:openapi';
ajv.addSchema({ ...openapiDocument(), $id: CONTRACT_ID });

interface CompiledParameter {
  spec: ParameterSpec;
  read(raw: string): unknown;
  valid(value: unknown): boolean;
}

const INTEGER = /^\d{1,9}$/;
/** A plain decimal (`0.8`, `1`, `.5`): no sign, exponent or hexadecimal. */
const DECIMAL = /^(?:\d{1,9}(?:\.\d{1,9})?|\.\d{1,9})$/;

function compileParameter(spec: ParameterSpec, operationId: string, index: number): CompiledParameter {
  // The parameter's schema as the contract writes it ($refs included), by its place in the document.
  const validate = ajv.compile({ $ref: `${CONTRACT_ID}#${pointerOf(operationId, index)}` });
  const type = spec.schema.type;
  const read =
    type === 'integer'
      ? (raw: string) => (INTEGER.test(raw) ? Number(raw) : undefined)
      : type === 'number'
        ? (raw: string) => (DECIMAL.test(raw) ? Number(raw) : undefined)
        : type === 'array'
          ? (raw: string) => (raw === '' ? undefined : raw.split(','))
          : (raw: string) => raw;
  const isInstant =
    spec.schema.format === 'date-time'
      ? (v: unknown) => typeof v === 'string' && parseRfc3339(v) !== undefined
      : () => true;
  return { spec, read, valid: (value) => value !== undefined && validate(value) && isInstant(value) };
}

/** The JSON pointer of an operation's parameter schema in openapi.yaml (following a parameter `$ref`). */
function pointerOf(operationId: string, index: number): string {
  const doc = openapiDocument() as any;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (op?.operationId !== operationId) continue;
      const param = op.parameters[index];
      if (param.$ref) return `${param.$ref.slice(1)}/schema`;
      return `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/parameters/${index}/schema`;
    }
  }
  throw new Error(`openapi.yaml: no operation ${operationId}`);
}

/** The reader of an operation's query, compiled once from the contract. */
export function parameterReader(operationId: string): (query: QueryValues) => ParameterReading {
  const specs = operationParameters(operationId);
  const compiled = specs.map((spec, index) => compileParameter(spec, operationId, index));
  const names = new Set(specs.map((p) => p.name));
  return (query) => {
    for (const name of Object.keys(query))
      if (!names.has(name)) return { ok: false, detail: unknownParameterDetail(name) };
    const params: Record<string, unknown> = {};
    for (const p of compiled) {
      const raw = Object.prototype.hasOwnProperty.call(query, p.spec.name) ? query[p.spec.name] : undefined;
      if (raw === undefined) {
        if (p.spec.required) return { ok: false, detail: parameterProblemDetail(p.spec, 'missing') };
        // A contract default fills an absent parameter: handlers and their `next` links see the served value.
        if (p.spec.schema.default !== undefined) params[p.spec.name] = p.spec.schema.default;
        continue;
      }
      if (Array.isArray(raw)) return { ok: false, detail: parameterProblemDetail(p.spec, 'repeated') };
      const value = p.read(raw);
      if (!p.valid(value)) return { ok: false, detail: parameterProblemDetail(p.spec, 'invalid') };
      params[p.spec.name] = value;
    }
    return { ok: true, params };
  };
}

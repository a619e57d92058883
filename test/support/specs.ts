/** Loads the two hand-written contracts for tests. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export function loadYaml(file: string): any {
  return parse(readFileSync(`${repoRoot}/${file}`, 'utf8'));
}

/** An Ajv instance that knows the OpenAPI document, so `openapi#/components/...` refs resolve. */
export function openapiAjv(openapi: any): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addSchema(openapi, 'openapi');
  return ajv;
}

/** Follows a local `#/...` JSON pointer. */
export function resolvePointer(doc: any, ref: string): any {
  if (!ref.startsWith('#/')) throw new Error(`not a local ref: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => node?.[key], doc);
}

export function deref<T = any>(doc: any, node: any): T {
  let n = node;
  while (n && typeof n === 'object' && typeof n.$ref === 'string') n = resolvePointer(doc, n.$ref);
  return n as T;
}

/** Response validation against openapi.yaml (tests, VALIDATE_RESPONSES=true): a violation throws, answered 500. */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { openapiDocument } from '../contract/index.js';

export class ContractViolation extends Error {}

export type ResponseCheck = (operationId: string, status: number, mediaType: string, body: unknown) => void;

export function createResponseCheck(): ResponseCheck {
  const doc = openapiDocument();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addSchema(doc, 'openapi');
  const deref = (n: any): any =>
    n?.$ref
      ? deref(
          n.$ref
            .slice(2)
            .split('/')
            .reduce((x: any, k: string) => x[k], doc),
        )
      : n;
  const ops = new Map<string, any>();
  for (const item of Object.values<any>(doc.paths))
    for (const op of Object.values<any>(item)) ops.set(op.operationId, op);
  const cache = new Map<string, ValidateFunction>();

  return (operationId, status, mediaType, body) => {
    const op = ops.get(operationId);
    if (!op) throw new ContractViolation(`unknown operation ${operationId}`);
    const response = deref(op.responses[String(status)]);
    if (!response) throw new ContractViolation(`${operationId} does not document status ${status}`);
    const media = response.content?.[mediaType];
    if (!media) throw new ContractViolation(`${operationId} ${status} does not document ${mediaType}`);
    const key = `${operationId} ${status} ${mediaType}`;
    let validate = cache.get(key);
    if (!validate) {
      validate = media.schema.$ref ? ajv.getSchema(`openapi${media.schema.$ref}`)! : ajv.compile(media.schema);
      cache.set(key, validate);
    }
    if (!validate(body)) throw new ContractViolation(`${key}: ${ajv.errorsText(validate.errors)}`);
  };
}

import { describe, expect, it } from 'vitest';
import { Parser, fromFile } from '@asyncapi/parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { deref, loadYaml, openapiAjv, repoRoot } from '../support/specs.js';

const openapi = loadYaml('openapi.yaml');
const ajv = openapiAjv(openapi);

interface NamedExample {
  where: string;
  schema: any;
  value: unknown;
}

/** Every named example of every response and parameter of openapi.yaml, with the schema it must satisfy. */
function openapiExamples(): { examples: NamedExample[]; responsesWithoutExamples: string[] } {
  const examples: NamedExample[] = [];
  const responsesWithoutExamples: string[] = [];
  for (const [path, item] of Object.entries<any>(openapi.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      for (const param of op.parameters ?? []) {
        const p = deref(openapi, param);
        if (p.example !== undefined) {
          examples.push({ where: `${op.operationId} parameter ${p.name}`, schema: p.schema, value: p.example });
        }
      }
      for (const [status, resp] of Object.entries<any>(op.responses)) {
        const r = deref(openapi, resp);
        for (const [mediaType, media] of Object.entries<any>(r.content ?? {})) {
          const named = Object.entries<any>(media.examples ?? {});
          if (named.length === 0)
            responsesWithoutExamples.push(`${method.toUpperCase()} ${path} ${status} ${mediaType}`);
          for (const [name, ex] of named) {
            examples.push({
              where: `${op.operationId} ${status} ${mediaType} example "${name}"`,
              schema: media.schema,
              value: deref(openapi, ex).value,
            });
          }
        }
      }
    }
  }
  return { examples, responsesWithoutExamples };
}

function validateAgainst(schema: any, value: unknown): string {
  // An inline schema (a parameter's) may itself $ref the components: point those at the loaded document.
  const inline = JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"openapi#/'));
  const validate = schema.$ref ? ajv.getSchema(`openapi${schema.$ref}`)! : ajv.compile({ ...inline, $id: undefined });
  return validate(value) ? '' : ajv.errorsText(validate.errors);
}

describe('every named example of openapi.yaml satisfies its schema', () => {
  const { examples, responsesWithoutExamples } = openapiExamples();

  it('gives every response of every operation at least one named example', () => {
    expect(responsesWithoutExamples).toEqual([]);
    expect(examples.length).toBeGreaterThan(20);
  });

  it.each(examples.map((e) => [e.where, e] as const))('%s', (_where, ex) => {
    expect(validateAgainst(ex.schema, ex.value)).toBe('');
  });

  it('rejects an example that breaks the schema (the check can fail)', () => {
    const bad = { count: 1, articles: [{ id: 'not-a-ulid', content: '', urgency: 'soon' }] };
    expect(validateAgainst({ $ref: '#/components/schemas/NewsList' }, bad)).not.toBe('');
  });
});

describe('every named message example of asyncapi.yaml satisfies the Article payload', async () => {
  const parser = new Parser();
  const { document, diagnostics } = await fromFile(parser, `${repoRoot}/asyncapi.yaml`).parse();
  const errors = diagnostics.filter((d) => d.severity === 0);

  it('parses with @asyncapi/parser without errors', () => {
    expect(errors.map((e) => e.message)).toEqual([]);
    expect(document).toBeDefined();
  });

  const message = document!.components().messages().all()[0]!;
  const payloadAjv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(payloadAjv);
  const validatePayload = payloadAjv.compile(message.payload()!.json());
  const examples = message.examples().all();

  it('has the named examples for a pro and a max client', () => {
    expect(examples.map((e) => e.name())).toEqual(expect.arrayContaining(['proClient', 'maxClient']));
  });

  it.each(examples.map((e) => [e.name()!, e.payload()] as const))('example "%s"', (_name, payload) => {
    expect(validatePayload(payload), payloadAjv.errorsText(validatePayload.errors)).toBe(true);
  });

  it('uses the same Article schema as openapi.yaml, not a copy', () => {
    const raw = loadYaml('asyncapi.yaml');
    expect(raw.components.messages.Article.payload).toEqual({ $ref: './openapi.yaml#/components/schemas/Article' });
    const { ['x-parser-schema-id']: _id, ...payload } = message.payload()!.json() as any;
    expect(payload.required).toEqual(openapi.components.schemas.Article.required);
    expect(Object.keys(payload.properties)).toEqual(Object.keys(openapi.components.schemas.Article.properties));
  });
});
